"""Headless Chromium (Debian's package, driven by Playwright) against a live server."""

import io
import os

import pytest
from django.core.management import call_command

from tests.support import database_flush

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the Django ORM
    # calls the tests make around it are still synchronous and safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def site(live_server, canonical_content, settings):
    """The live server's base URL, with the canonical content loaded; it is the site URL
    too, as pages build their absolute links from it (never from the Host header)."""
    settings.SITE_URL = live_server.url
    return live_server.url


# --- One content load for a whole module of tests that only read -----------------------
#
# `site` serves through pytest-django's `live_server`, which makes every test
# transactional: the database is flushed when the test ends and the next one loads the
# canonical content again (some 4 s). A module whose tests only read overrides two
# fixtures instead, as tests/mica/test_write_census.py does for its `world`:
#
#     @pytest.fixture
#     def db(shared_content):
#         """..."""  (no test transaction: the module's committed content)
#
#     @pytest.fixture
#     def site(shared_site):
#         return shared_site
#
# `db` keeps its name because pytest-django creates the test database only when a
# collected test asks for `db`, `transactional_db`, `live_server` or the django_db mark.
# `shared_site` serves through a live server of its own over the canonical content,
# loaded (if a test before it flushed it) and committed once for the module.
# What keeps a write from leaking to the next test, which the flush used to ensure: after
# each test the footprint of the content (every model table's row count, and the
# revisions of the content tables) is compared with the module's, and a difference fails
# that test and puts the canonical content back. The page and fragment caches cannot
# serve one test what another rendered: their keys carry the settings generation, which
# each test's own SITE_URL setting moves, as with `site`.


def _model_tables():
    from django.db import connection

    return sorted(connection.introspection.django_table_names(only_existing=True))


def content_footprint():
    """{table: rows} of every model table, and the revisions of the content tables."""
    from django.db import connection

    from mica.content.revision import revisions_read

    with connection.cursor() as cursor:
        counts = {}
        for table in _model_tables():
            cursor.execute(f"SELECT COUNT(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts, revisions_read()


def _footprint_changes(before, after):
    (rows_before, revisions_before), (rows_after, revisions_after) = before, after
    changes = [
        f"{table}: {rows_before.get(table)} -> {rows_after.get(table)} rows"
        for table in sorted(set(rows_before) | set(rows_after))
        if rows_before.get(table) != rows_after.get(table)
    ]
    changes += [
        f"{table}: revision {revisions_before.get(table)} -> {revisions_after.get(table)}"
        for table in sorted(set(revisions_before) | set(revisions_after))
        if revisions_before.get(table) != revisions_after.get(table)
    ]
    return changes


def _content_load():
    """The canonical content, committed and counted as the baseline: every content
    revision moves, as `canonical_content` does after a flush (tests/conftest.py)."""
    from mica.content import changes

    call_command("load_canonical_content", stdout=io.StringIO())
    changes.revisions_bump_all()


def _a_test_database():
    from django.db import connection

    name = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite":
        return connection.is_in_memory_db() or "test" in name
    return name.startswith("test_")


class SharedContent:
    """The committed content a module's tests read, and the live server serving it."""

    def __init__(self, server):
        self.server = server
        self.url = server.url
        self.added = []
        self.footprint = content_footprint()

    def add(self, command):
        """Load more records for every test of the module (the demo runs, say); the
        module ends by putting the canonical content alone back."""
        self.added.append(command)
        call_command(command, stdout=io.StringIO())
        self.footprint = content_footprint()

    def restore(self, *, added=True):
        """The content afresh, committed: the canonical content, and what `add` loaded
        unless `added` is false."""
        database_flush()
        _content_load()
        for command in self.added if added else ():
            call_command(command, stdout=io.StringIO())
        self.footprint = content_footprint()


@pytest.fixture(scope="session")
def shared_live_server(django_db_setup):
    """A live server of this worker's own for `shared_site` (pytest-django's `live_server`
    would make each test that names it transactional). Made after the test database, so
    an in-memory SQLite connection is shared with it as `live_server` shares it."""
    from pytest_django.live_server_helper import LiveServer

    server = LiveServer(os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost")
    yield server
    # Not server.stop(), which also takes back the in-memory SQLite connection's sharing:
    # the threads of connections Chromium still keeps alive outlive the server, and each
    # closes the connection (a no-op in memory) as it ends, which must stay allowed.
    server.thread.terminate()


@pytest.fixture(scope="module")
def shared_content(shared_live_server, django_db_blocker):
    """The canonical content, committed, for every test of the module: no test
    transaction and no flush between them. The database stays unblocked for the module,
    as the server reads it from its own threads."""
    from django.db import connection

    from catalogue.models import TaskDefinition

    with django_db_blocker.unblock():
        assert _a_test_database(), f"not a test database: {connection.settings_dict['NAME']}"
        assert connection.get_autocommit() and not connection.in_atomic_block
        if not TaskDefinition.objects.exists():
            _content_load()
        shared = SharedContent(shared_live_server)
        yield shared
        if shared.added:
            shared.restore(added=False)


@pytest.fixture
def shared_site(db, shared_content, settings):
    """`site` for a module whose tests only read: the same base URL and site URL, over
    the module's shared content. A test that changed the content fails, and the next
    test gets the canonical content back."""
    from django.db import connection

    assert not connection.in_atomic_block, (
        "`shared_site` serves committed content: the module overrides `db` (see above)"
    )
    server = shared_content.server
    settings.SITE_URL = shared_content.url
    server._live_server_modified_settings.enable()
    try:
        yield shared_content.url
    finally:
        server._live_server_modified_settings.disable()
    changes = _footprint_changes(shared_content.footprint, content_footprint())
    if changes:
        shared_content.restore()
        pytest.fail(
            "a test of a read-only module (`shared_site`) wrote to the database; give its "
            "module the per-test `site` instead:\n" + "\n".join(changes),
            pytrace=False,
        )


def assert_accessible(page):
    """Fail on any WCAG 2.0/2.1/2.2 A or AA violation axe-core finds."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(
        page,
        options={"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"]},
    )
    violations = results.response["violations"]
    report = "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} -> "
        + "; ".join(node["target"][0] for node in v["nodes"][:5])
        for v in violations
    )
    assert not violations, f"{page.url}\n{report}"


@pytest.fixture
def narrow_page(browser):
    """A page 320 CSS px wide: the width WCAG 1.4.10 asks content to reflow to."""
    context = browser.new_context(viewport={"width": 320, "height": 640})
    yield context.new_page()
    context.close()


def sideways_overflow(page):
    """How many px the page scrolls sideways (0 or less when it reflows)."""
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


def assert_reflows(page, url):
    page.goto(url)
    overflow = sideways_overflow(page)
    width = page.viewport_size["width"]
    assert overflow <= 0, f"{url} scrolls sideways by {overflow} px at {width} px"
