"""Baked public pages (issue 20, item 1): every anonymous page of the sitemap baked into
files after a content change, answered before Django runs, and never older than the
last committed revision.

The promise they keep is the page cache's: "A change is seen at once, and asking costs
a 304 without a body." These tests call the project's own WSGI layer (mica.site.baked)
with real WSGI environs, in front of Django's real handler, and count the requests that
reach Django.
"""

import hashlib
import json
import re

import pytest
from django.conf import settings
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_started
from django.db import close_old_connections, connection
from django.test import RequestFactory

from catalogue.models import TaskDefinition
from mica.content.builds import build_published
from mica.jobs.models import JobRun, JobState
from mica.site import bake as bake_module
from mica.site.bake import BUILD_KIND, BakeRefused, bake_current, bake_published, pages_bake
from mica.site.baked import BakedPages
from mica.site.tasks import pages_bake_run
from tests.factories import HOLDOUT_CANARY, content_changes, holdout_task

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

TASK = "ec-reschedule-three-party"
TASK_PAGES = ["/tasks/", "/ko/tasks/", f"/tasks/{TASK}/", f"/ko/tasks/{TASK}/"]
# What most tests bake: a bake of the whole sitemap takes seconds, and one test makes it.
PAGES = [
    "/",
    "/ko/",
    "/methodology/",
    "/ko/methodology/",
    "/ko/governance/",
    "/challenges/",
    "/markets/kr/",
    "/ko/markets/kr/",
    "/submit/",
    "/downloads/",
    *TASK_PAGES,
]


def bake(paths=PAGES):
    return pages_bake(paths=paths)


class DjangoCounted:
    """Django's own WSGI handler, noting every request that reaches it."""

    def __init__(self):
        self.handler = WSGIHandler()
        self.paths = []

    def __call__(self, environ, start_response):
        self.paths.append(environ["PATH_INFO"])
        # As Django's test client does: the test's transaction lives on this connection,
        # which the handler would close at the request's start, as in production.
        request_started.disconnect(close_old_connections)
        try:
            return self.handler(environ, start_response)
        finally:
            request_started.connect(close_old_connections)


class Answer:
    def __init__(self, status, headers, body):
        self.status = int(status.split()[0])
        self.headers = {name.lower(): value for name, value in headers}
        self.body = body


@pytest.fixture
def django_app():
    return DjangoCounted()


@pytest.fixture
def site(django_app):
    return BakedPages(django_app)


def empty_page_cache():
    """The page cache emptied for this test process: every key read from now on is of a
    new version. Not a flush: on Redis the database is shared by the other test
    processes (and a flush emptied their page caches under them)."""
    cache.version += 1


@pytest.fixture
def baking(settings, tmp_path, canonical_content, page_cache, django_capture_on_commit_callbacks):
    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    empty_page_cache()

    def committed(change):
        """Run `change` and its after-commit steps, as a committed transaction does."""
        with django_capture_on_commit_callbacks(execute=True):
            change()
        # A real commit empties the list; the test's own transaction would keep it, and
        # the next change would join a step that has already run.
        connection.run_on_commit.clear()

    return committed


def get(site, path, method="GET", **headers):
    environ = RequestFactory().generic(method, path, **headers).environ
    answer = {}

    def start_response(status, response_headers, exc_info=None):
        answer.update(status=status, headers=response_headers)

    body = b"".join(site(environ, start_response))
    return Answer(answer["status"], answer["headers"], body)


def live(client, path):
    """What Django renders for an anonymous reader now, the page cache emptied first."""
    empty_page_cache()
    return client.get(path)


def manifest():
    """The published bake's manifest, every page listed, whichever layer holds it."""
    return bake_published().manifest


def title_change(text):
    def change():
        version = TaskDefinition.objects.get(slug=TASK).current_version
        version.title_en, version.title_ko = text, f"{text} (한국어)"
        version.save()

    return change


def test_baked_pages_are_answered_before_django_as_django_would(client, baking, site, django_app):
    pages_bake()
    baked = manifest()["pages"]
    address = re.escape(settings.SITE_URL)
    sitemap = re.findall(rf"<loc>{address}(/[^<]*)</loc>", client.get("/sitemap.xml").text)
    assert set(baked) | set(manifest()["live"]) == set(sitemap) and len(sitemap) > 200
    for path in ["/", "/ko/", "/methodology/", "/ko/markets/kr/", *TASK_PAGES]:
        answer = get(site, path)
        expected = live(client, path)
        assert answer.status == 200
        written = bake_published().file(path).read_bytes()
        assert answer.body == expected.content == written
        for header in ("etag", "last-modified", "vary", "cache-control", "content-language"):
            assert answer.headers[header] == expected[header], (path, header)
        assert answer.headers["content-length"] == str(len(expected.content))
        assert answer.headers["content-security-policy"] == expected["Content-Security-Policy"]
    assert django_app.paths == []


def test_conditional_and_head_requests_are_answered_from_the_bake(baking, site, django_app):
    bake()
    first = get(site, "/methodology/")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    again = get(site, "/methodology/", HTTP_IF_NONE_MATCH=etag)
    assert again.status == 304 and again.body == b""
    assert again.headers["etag"] == etag and "cookie" in again.headers["vary"].lower()
    assert "content-type" not in again.headers
    assert get(site, "/methodology/", HTTP_IF_MODIFIED_SINCE=modified).status == 304
    assert get(site, "/methodology/", HTTP_IF_NONE_MATCH='"another"').status == 200
    head = get(site, "/ko/methodology/", method="HEAD")
    assert head.status == 200 and head.body == b"" and int(head.headers["content-length"]) > 1000
    assert django_app.paths == []


@pytest.mark.parametrize(
    "path, headers",
    [
        ("/methodology/", {"HTTP_COOKIE": "sessionid=abc"}),  # a signed-in reader
        ("/methodology/", {"HTTP_COOKIE": "messages=notice"}),  # a notice to show
        ("/methodology/", {"QUERY_STRING": "q=1"}),
        ("/methodology/", {"HTTP_IF_MATCH": '"x"'}),
        ("/submit/challenge/", {}),  # a form
        ("/submit/", {}),
        ("/downloads/", {}),  # shows the published export set, which no table follows
        ("/admin/", {}),
        ("/api/v1/tasks/", {}),
        ("/methodology", {}),  # Django redirects it
    ],
)
def test_readers_and_pages_the_bake_does_not_cover_go_to_django(
    baking, site, django_app, path, headers
):
    bake()
    get(site, path, **headers)
    assert django_app.paths == [path]


def test_a_post_to_a_baked_address_goes_to_django(baking, site, django_app):
    bake()
    get(site, "/tasks/", method="POST")
    assert django_app.paths == ["/tasks/"]


def test_forms_and_signed_in_pages_are_never_baked(baking, client):
    bake()
    baked, left_live = bake_published().files(), manifest()["live"]
    assert "/submit/" in left_live and "/downloads/" in left_live
    assert baked
    for path, file in baked.items():
        body = file.read_bytes()
        assert b"csrfmiddlewaretoken" not in body, path
        assert b'method="post"' not in body.lower(), path


def test_an_edit_sends_the_pages_it_affects_to_django_at_once_then_to_the_new_bake(
    baking, client, site, django_app
):
    bake()
    tables = manifest()["pages"]
    untouched = [p for p, page in tables.items() if "catalogue_taskversion" not in page["tables"]]
    assert untouched, "some page reads no task version"
    baking(title_change("Move the three-party meeting, freshly titled"))
    for path in TASK_PAGES:
        answer = get(site, path)
        assert answer.body == live(client, path).content
        assert "freshly titled" in answer.body.decode(), path
    assert django_app.paths == TASK_PAGES
    get(site, untouched[0])
    assert django_app.paths == TASK_PAGES  # still from the bake
    django_app.paths.clear()
    bake()
    for path in TASK_PAGES:
        assert "freshly titled" in get(site, path).body.decode(), path
    assert django_app.paths == []


def test_an_anonymous_reader_never_sees_a_page_older_than_the_last_commit(baking, client, site):
    """Edits of several records, with bakes between some of them: after every commit,
    every page the layer answers equals what Django renders at that moment."""
    pages = ["/", "/ko/", "/methodology/", "/ko/governance/", "/markets/kr/", *TASK_PAGES]
    steps = [title_change("First new title"), bake, title_change("Second new title")]
    bake()
    for step in steps:
        if step is bake:
            step()
        else:
            baking(step)
        for path in pages:
            assert get(site, path).body == live(client, path).content, path


def test_a_bake_made_on_an_earlier_day_is_not_served(baking, site, django_app):
    bake()
    document = bake_current() / "pages.json"
    earlier = json.loads(document.read_text(encoding="utf-8"))
    earlier["valid_until"] -= 86400
    document.write_text(json.dumps(earlier), encoding="utf-8")
    get(BakedPages(django_app), "/methodology/")
    assert django_app.paths == ["/methodology/"]


def test_a_public_page_showing_holdout_text_refuses_the_bake_and_keeps_the_last(baking, site):
    """Seed: "A holdout item is never reachable from a public artifact." The bake fails
    closed: the published bake stays as it was."""
    bake()
    published = bake_current()
    baking(holdout_task)
    baking(title_change(f"Holdout {HOLDOUT_CANARY}"))
    with pytest.raises(BakeRefused) as refused:
        bake()
    assert "holdout" in str(refused.value.message)
    assert bake_current() == published
    assert len(list(published.parent.iterdir())) == 1  # the refused build is gone


def test_a_page_that_renders_differently_each_time_refuses_the_bake(baking, monkeypatch):
    """The bake publishes a page only where a reader's live render would give the same
    bytes; a shell that changed with every render (a per-request token, say) would be
    frozen into every page."""
    from mica.site import context_processors

    bake()
    published = bake_current()
    renders = iter(range(10_000))

    def pages_each_time_new(path):
        return [{**page, "label": f"{page['label']} {next(renders)}"} for page in pages(path)]

    pages = context_processors.routed_pages
    monkeypatch.setattr(context_processors, "routed_pages", pages_each_time_new)
    with pytest.raises(BakeRefused) as refused:
        # Every page rendered: no table moved, so a bake that may keep the last one's
        # pages would keep this one (what changed here is the code, which a release's
        # bake sees in its digest).
        pages_bake(paths=["/methodology/"], full=True)
    assert "renders differently each time" in str(refused.value.message)
    assert bake_current() == published


def test_task_pages_baked_by_the_hundred_are_the_pages_rendered_one_by_one(
    baking, client, settings
):
    """The bake makes the bodies of many task pages in one read; each must be what that
    page alone renders, in either language."""
    slugs = list(TaskDefinition.objects.filter(task_set="public").values_list("slug", flat=True))
    paths = [f"{prefix}/tasks/{slug}/" for prefix in ("", "/ko") for slug in slugs[:30]]
    bake(paths)
    baked = {path: file.read_bytes() for path, file in bake_published().files().items()}
    settings.FRAGMENT_CACHE_SECONDS = 0
    assert baked == {path: live(client, path).content for path in paths}


@pytest.fixture
def queued_jobs():
    """Jobs are sent to the broker and wait there, as they do where a worker runs them."""
    from mica.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = eager


def test_content_changes_bake_again_after_their_debounce(
    baking, settings, queued_jobs, site, django_app
):
    """Where a worker runs jobs, a committed edit queues one bake; further edits while it
    waits ride along; the run (here, in this process) publishes the new bake."""
    settings.PAGE_BAKE_ON_CHANGE = True
    bake()
    before = bake_current()
    baking(title_change("A title the next bake carries"))
    baking(title_change("A title the next bake carries, edited again"))
    run = JobRun.objects.get(job_name=pages_bake_run.name)
    assert run.state == JobState.QUEUED
    pages_bake_run.apply(args=(run.pk,))
    run.refresh_from_db()
    assert run.state == JobState.SUCCEEDED and run.message_ko.startswith("페이지 ")
    assert bake_current() != before
    assert "edited again" in get(site, "/tasks/").body.decode()
    assert django_app.paths == []


def _outcome(bake_pages):
    """What a bake would publish: each page's digest and headers and the pages left live,
    or the refusal that stopped it."""
    try:
        made = bake_pages()
    except BakeRefused as refused:
        return ("refused", str(refused.message))
    return json.loads(json.dumps([made["pages"], made["live"]]))


# Each seed bakes every page a dozen times; the second sequence runs on the embedded
# layer only (marked as a walk over every page), the first on both databases.
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.walk)])
def test_an_incremental_bake_is_the_full_bake_after_random_changes(baking, seed):
    """Issue 31: "the incremental result is byte-identical to a full one (a test compares
    them after a random sequence of edits, retirements, holdout changes and publications)".
    Each incremental bake is made from the one before it, as a worker makes them."""
    import random

    from tests.factories import LeadFactory

    rng = random.Random(seed)
    lead = LeadFactory()
    pages_bake(full=True)
    rendered = []
    changes = content_changes(rng, lead)
    assert changes
    for name, change in changes:
        baking(change)
        full = _outcome(lambda: pages_bake(full=True, publish=False))
        incremental = _outcome(lambda: pages_bake())
        assert incremental == full, f"after {name}"
        if incremental[0] != "refused":  # a refusal is a tuple, a bake a list
            rendered.append(manifest()["rendered"])
            assert _as_served() == incremental[0], f"after {name}: the layers serve another bake"
    # Some bake kept pages instead of rendering them, or the comparison proved nothing.
    assert min(rendered) < len(manifest()["pages"])


def _as_served():
    """Each page of the published bake as its layers resolve it, checked against its file."""
    published = bake_published()
    for path, file in published.files().items():
        assert hashlib.sha256(file.read_bytes()).hexdigest() == published.pages[path]["sha256"]
    return json.loads(json.dumps(published.pages))


def test_a_bake_after_an_edit_stores_only_its_pages_on_the_layers_below(baking, monkeypatch):
    """Issue 31: the bake after a commit "re-renders only the pages that read a changed
    row ... and copies the rest from the previous build", at the cost of the change: its
    build holds the pages it rendered and names the layers below. Every MAX_LAYERS-th
    bake lays every page out again, so a chain never grows without end."""
    monkeypatch.setattr(bake_module, "MAX_LAYERS", 3)
    pages_bake(full=True)
    chains = []
    for round_ in range(3):
        baking(title_change(f"Edited in round {round_}"))
        made = pages_bake()
        top = bake_current()
        written = sorted(p.relative_to(top).as_posix() for p in top.rglob("*") if p.is_file())
        chains.append((len(manifest()["below"]) if "below" in manifest() else 0, len(written)))
        assert _as_served() == json.loads(json.dumps(made["pages"]))
        assert f"Edited in round {round_}" in get_served(f"/tasks/{TASK}/")
    total = len(manifest()["pages"])
    (one, one_files), (two, two_files), (again, again_files) = chains
    assert (one, two, again) == (1, 2, 0)
    assert one_files == two_files < total / 4 and again_files == total + 1  # and the manifest


def get_served(path):
    return bake_published().file(path).read_text(encoding="utf-8")


def test_a_task_edit_renders_that_task_s_pages_and_the_listings_not_every_task_page(baking):
    """Issue 31: "the bake after a commit re-renders only the pages that read a changed
    row, plus the listings and figures that depend on them"."""
    pages_bake(full=True)
    before = manifest()["pages"]
    baking(title_change("A title only its own pages and the listings show"))
    after = pages_bake()
    changed = {p for p, page in after["pages"].items() if page["sha256"] != before[p]["sha256"]}
    assert {f"/tasks/{TASK}/", f"/ko/tasks/{TASK}/", "/tasks/", "/ko/tasks/"} <= changed
    task_pages = [path for path in before if "/tasks/" in path and path.count("/") > 3]
    # Every task page reads the task tables; only the edited task's two were rendered.
    assert len(task_pages) > 50 and after["rendered"] < 50


def test_a_draft_saved_through_the_admin_renders_its_task_s_pages_not_every_task_page(
    baking, admin_client, admin_user
):
    """Issue 42, item 1: after "each title edit saved through the admin's change form, the
    bake rendered 210 of 240 pages": the version's new hash was written by a queryset
    update, which the row tracking reads as every row. The editor's own path here: a new
    version started from the current one, its title changed in the change form, saved."""
    from catalogue.services import task_version_start_next
    from tests.census import form_data

    current = TaskDefinition.objects.get(slug=TASK).current_version
    baking(lambda: task_version_start_next(version_id=current.pk, actor=admin_user))
    draft = current.definition.versions.get(version="1.1.0")
    url = f"/admin/catalogue/taskversion/{draft.pk}/change/"
    data = form_data(admin_client.get(url).text, "taskversion_form")
    data["title_en"] = "A draft's title no public page shows"
    pages_bake(full=True)
    before = manifest()["pages"]

    def save():
        assert admin_client.post(url, data).status_code == 302

    baking(save)
    after = pages_bake()
    task_pages = [path for path in before if "/tasks/" in path and path.count("/") > 3]
    assert len(task_pages) > 50 and after["rendered"] < 50
    assert b"A draft's title" not in get(BakedPages(DjangoCounted()), f"/tasks/{TASK}/").body


def test_a_bake_with_nothing_changed_keeps_the_published_one(baking):
    """Issue 34, item 10: "`make run` on an unchanged database skips ... the bake whose
    inputs have not changed"."""
    bake()
    published = build_published(BUILD_KIND)
    again = bake()
    assert again["rendered"] == 0 and again["pages"] == manifest()["pages"]
    assert build_published(BUILD_KIND).pk == published.pk
    baking(title_change("A change the next bake publishes"))
    assert bake()["rendered"] > 0
    assert build_published(BUILD_KIND).pk != published.pk


def test_the_bake_reports_its_progress_page_by_page(baking, settings):
    """A person following the bake sees each page counted as it is rendered, even inside
    a batch of task pages prepared together, not one figure for most of the run."""
    settings.JOB_PROGRESS_SECONDS = 0
    slugs = list(TaskDefinition.objects.filter(task_set="public").values_list("slug", flat=True))
    paths = [f"/tasks/{slug}/" for slug in slugs[:40]]
    reports = []
    pages_bake(paths=paths, progress=lambda percent, message="": reports.append((percent, message)))
    counted = [str(m) for _p, m in reports if str(m).startswith("Rendered ")]
    assert counted == [f"Rendered {n} of {len(paths)} pages" for n in range(1, len(paths) + 1)]
    percents = [p for p, _m in reports]
    assert percents == sorted(percents) and percents[-1] == 100


def test_progress_is_written_at_most_once_an_interval(baking, settings):
    """Each report writes the run's row: a fast bake reports its start and its end, not
    every page."""
    settings.JOB_PROGRESS_SECONDS = 3600
    reports = []
    pages_bake(paths=PAGES, progress=lambda percent, message="": reports.append(str(message)))
    counted = [m for m in reports if m.startswith("Rendered ")]
    assert counted == [
        f"Rendered 1 of {len(PAGES)} pages",
        f"Rendered {len(PAGES)} of {len(PAGES)} pages",
    ]
