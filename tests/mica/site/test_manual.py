"""The manual: docs/ builds with `mkdocs build --strict`, every link of the built site
leads somewhere, each English page has its Korean page, and the portal serves it at
/docs/ and /docs/ko/ under its Content-Security-Policy, linked from every page's footer
and from the admin.

Issue 34, item 9: "move the rest into a documentation site built from `docs/` … in
English and Korean … served by `make run` at `/docs/` … and built in CI with a link check."
"""

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from django.urls import Resolver404, resolve

# The build reads only files; one build serves every test of the module.
pytestmark = pytest.mark.walk

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
MKDOCS = Path(sys.executable).with_name("mkdocs")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The manual built as CI builds it: strict, so a broken link or anchor fails."""
    site = tmp_path_factory.mktemp("manual") / "site"
    done = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # --strict stops the English build at a warning; the Korean build (the i18n plugin's
    # second pass) only prints its warnings, so they are read here.
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert not warnings, "\n".join(warnings)
    return site


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name) and not (tag == "link" and attrs.get("rel") == "alternate"):
                self.links.append(attrs[name])


def _parsed(page):
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _built_file(site, path):
    target = site / unquote(path).lstrip("/")
    return target / "index.html" if target.is_dir() else target


def _broken_links(site, page, parsed, pages):
    """The links of `page` that lead nowhere: a file of the build that is missing, an
    anchor its page lacks, or a path of the portal its URLconf does not know."""
    url = "/docs/" + page.relative_to(site).as_posix()
    broken = []
    for link in parsed.links:
        parts = urlsplit(urljoin(url, link))
        if parts.scheme not in ("", "http", "https") or (parts.netloc and link != parts.path):
            continue
        if urlsplit(link).scheme or urlsplit(link).netloc:
            continue  # another site: not this check's business
        if not parts.path.startswith("/docs/"):
            try:
                resolve(parts.path)
            except Resolver404:
                broken.append(link)
            continue
        target = _built_file(site, parts.path.removeprefix("/docs/"))
        if not target.is_file():
            broken.append(link)
        elif parts.fragment and target.suffix == ".html":
            ids = pages.setdefault(target, _parsed(target)).ids
            if unquote(parts.fragment) not in ids:
                broken.append(link)
    return broken


def test_every_link_of_the_built_manual_leads_somewhere(built):
    pages = {}
    broken = {}
    # The portal answers a missing page with its own 404 page: MkDocs' 404.html, written
    # for a site at the root of its host, is never linked or served in its place.
    html = sorted(p for p in built.rglob("*.html") if p.name != "404.html")
    assert len(html) > 10
    for page in html:
        parsed = pages.setdefault(page, _parsed(page))
        found = _broken_links(built, page, parsed, pages)
        if found:
            broken[page.relative_to(built).as_posix()] = found
    assert not broken, broken


def test_each_page_is_written_in_english_and_korean():
    sources = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    english = {p for p in sources if not p.endswith(".ko.md")}
    korean = {p.removesuffix(".ko.md") + ".md" for p in sources if p.endswith(".ko.md")}
    assert english == korean
    for name in korean:
        text = (DOCS / name.replace(".md", ".ko.md")).read_text(encoding="utf-8")
        assert len(re.findall(r"[가-힣]", text)) > 100, f"{name}: the Korean page is not Korean"


def test_the_built_manual_has_both_languages(built):
    assert '<html lang="en"' in (built / "index.html").read_text(encoding="utf-8")
    assert '<html lang="ko"' in (built / "ko" / "index.html").read_text(encoding="utf-8")
    english = {p.relative_to(built).as_posix() for p in built.glob("guides/*/index.html")}
    korean = {p.relative_to(built / "ko").as_posix() for p in built.glob("ko/guides/*/index.html")}
    assert english == korean and len(english) == 6


GUIDE_STEP = re.compile(r"^### ", re.M)


@pytest.mark.parametrize("guide", sorted(p.name for p in DOCS.glob("guides/*.md")))
def test_each_step_of_a_guide_shows_its_screenshot(guide):
    """Each step (a `###` heading of a guide) shows the screenshot the browser tests took
    of it, in the page's own language."""
    language = "ko" if guide.endswith(".ko.md") else "en"
    text = (DOCS / "guides" / guide).read_text(encoding="utf-8")
    steps = GUIDE_STEP.split(text)[1:]
    assert steps, f"{guide} has no steps"
    for step in steps:
        shots = re.findall(r"!\[[^\]]+\]\(\.\./screenshots/(\w+)/([\w./-]+\.png)\)", step)
        title = step.splitlines()[0]
        assert shots, f"{guide}: the step “{title}” has no screenshot"
        for shot_language, name in shots:
            assert shot_language == language, f"{guide}: {name} is in {shot_language}"
            assert (DOCS / "screenshots" / shot_language / name).is_file(), name


def _settings_variables():
    source = (ROOT / "mica" / "settings.py").read_text() + (
        ROOT / "deploy" / "gunicorn.conf.py"
    ).read_text()
    return set(re.findall(r"\"(MICA_[A-Z0-9_]+)\"", source))


@pytest.mark.parametrize("page", ["environment.md", "environment.ko.md"])
def test_every_environment_variable_is_in_the_reference(page):
    text = (DOCS / "reference" / page).read_text(encoding="utf-8")
    missing = sorted(name for name in _settings_variables() if f"`{name}`" not in text)
    assert not missing, missing


@pytest.mark.parametrize("page", ["commands.md", "commands.ko.md"])
def test_every_command_is_in_the_reference(page):
    text = (DOCS / "reference" / page).read_text(encoding="utf-8")
    commands = {
        p.stem
        for p in ROOT.glob("*/management/commands/*.py")
        if not p.name.startswith("_") and ".venv" not in p.parts
    } | {p.stem for p in ROOT.glob("mica/*/management/commands/*.py") if p.stem != "__init__"}
    missing = sorted(name for name in commands if f"manage.py {name}" not in text)
    assert not missing, missing


def test_the_readme_keeps_the_two_commands_and_the_first_administrator():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
    for step in ("createsuperuser", "issue_enrolment_code", "/docs/", "/docs/ko/"):
        assert step in readme, step
    assert len(readme.splitlines()) < 150, (
        "the README keeps the set-up and a map: write the rest in docs/, in both languages"
    )


# --- Served by the portal ---------------------------------------------------------------


@pytest.fixture
def manual(built, settings):
    settings.DOCS_DIR = built
    return built


def test_the_manual_is_served_in_english_and_korean(client, manual):
    english = client.get("/docs/")
    assert english.status_code == 200
    assert b'<html lang="en"' in b"".join(english.streaming_content)
    korean = client.get("/docs/ko/guides/authors/")
    assert korean.status_code == 200
    assert b'<html lang="ko"' in b"".join(korean.streaming_content)
    redirect = client.get("/ko/docs/guides/authors/")
    assert redirect.status_code == 301 and redirect["Location"] == "/docs/ko/guides/authors/"
    folder = client.get("/docs/guides/authors")
    assert folder.status_code == 301 and folder["Location"] == "/docs/guides/authors/"


def test_a_manual_page_allows_only_its_own_inline_scripts(client, manual):
    """Material's inline scripts run by their digests; nothing else inline does."""
    policy = client.get("/docs/")["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]+)", policy).group(1).split()
    assert script_src[0] == "'self'" and "'unsafe-inline'" not in script_src
    assert any(source.startswith("'sha256-") for source in script_src)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/docs/nothing-here/",
        "/docs/../mica/settings.py",
        "/docs/%2e%2e/manage.py",
        "/docs/" + "a" * 5000,
        "/docs/" + "a" * 5000 + "/",
        "/docs//etc/passwd",
    ],
)
def test_a_path_outside_the_manual_is_not_found(client, manual, path):
    assert client.get(path).status_code == 404


def test_a_node_with_an_empty_var_directory_finds_the_manual_of_its_release(tmp_path):
    """Issue 42: "No manual on a fresh node. It is built into `MICA_VAR_DIR/docs`, so a
    node started with an empty var directory answers 404 at `/docs/`." The manual is
    built with the release (`make docs`, into build/manual beside the code), and a node
    whose var directory is new and empty looks for it there."""
    from tests.support import fresh_environment, manage

    empty = tmp_path / "var"
    shown = manage(
        fresh_environment(empty),
        "shell",
        "-c",
        "from django.conf import settings; print(settings.DOCS_DIR)",
    )
    docs_dir = Path(shown.strip().splitlines()[-1])
    assert docs_dir == ROOT / "build" / "manual"
    assert not docs_dir.is_relative_to(empty)
    makefile = (ROOT / "Makefile").read_text()
    assert "DOCS_DIR ?= $(or $(MICA_DOCS_DIR),build/manual)" in makefile


@pytest.mark.django_db
def test_without_a_build_the_manual_is_not_found(client, settings, tmp_path):
    settings.DOCS_DIR = tmp_path / "not-built"
    assert client.get("/docs/").status_code == 404


@pytest.mark.django_db
def test_every_page_links_to_the_manual_in_its_language(client):
    assert 'href="/docs/"' in client.get("/").content.decode()
    assert 'href="/docs/ko/"' in client.get("/ko/").content.decode()


@pytest.mark.django_db
def test_the_admin_links_to_the_manual_in_its_language(client):
    from tests.factories import StaffFactory

    client.force_login(StaffFactory(username="manual-reader"))
    assert 'href="/docs/"' in client.get("/admin/").content.decode()
    assert 'href="/docs/ko/"' in client.get("/ko/admin/").content.decode()
