"""The bake: every anonymous public page of the sitemap, in both languages, as files.

After each committed content change (debounced as the exports are), a job renders
every location of the sitemap through the whole Django stack, as an anonymous reader
gets it, into a fresh directory; checks it; and publishes it with one atomic switch
(mica.published_dirs). mica.site.baked answers from the published set in front of
Django.

A build holds `pages.json` (its marker) and one file a page. For each page the
manifest keeps its response headers and the tables it read; for the whole build, the
table revisions read before the first page rendered. A page is served from the bake
only while none of its tables has moved since: a change is seen at once, on the pages
it affects, and the next bake catches up.

Left to Django, and so rendered live: pages outside the page cache, pages that hold a
form, and pages that also show state no table revision follows (the downloads page
shows the published export set).
"""

import datetime
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.urls import resolve
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from mica.content.page_cache import BAKE_RECORD, PageRecord, page_storable
from mica.content.revision import revisions_read
from mica.errors import DomainError
from mica.exports.holdout import holdout_hits, holdout_needles, holdout_patterns
from mica.published_dirs import build_dir_new, builds_prune, dir_current, dir_switch
from mica.site.sitemaps import SITEMAPS
from mica.text import lazy_format

MANIFEST = "pages.json"
KEEP_BUILDS = 2
# Headers the server sets for each answer, never part of a page.
SERVER_HEADERS = {"date", "server", "connection", "content-length"}


class BakeRefused(DomainError):
    """The bake found a page it must not publish; the published bake is left as it was."""


def bake_root():
    return Path(settings.PAGE_BAKE_DIR)


def sitemap_paths():
    """Every location of the sitemap, both languages, as paths under the site's address."""
    paths = []
    for sitemap_class in SITEMAPS.values():
        sitemap = sitemap_class()
        for page in sitemap.paginator.page_range:
            for url in sitemap.get_urls(page=page):
                paths.append(url["location"].removeprefix(settings.SITE_URL))
    return list(dict.fromkeys(paths))


def page_file(path):
    """Where a page's bytes live in a build: its path, as a static site lays it out."""
    relative = path.strip("/")
    return f"{relative}/index.html" if relative else "index.html"


class _Renderer:
    """Renders pages through the whole middleware stack, as a reader's request would be."""

    def __init__(self, site_url):
        self.handler = WSGIHandler()
        scheme, _sep, self.host = site_url.partition("://")
        self.scheme = scheme
        self.server_name, _sep, port = self.host.partition(":")
        self.port = port or ("443" if scheme == "https" else "80")

    def environ(self, path):
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": "",
            "SERVER_NAME": self.server_name,
            "SERVER_PORT": self.port,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": self.host,
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": self.scheme,
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        if self.scheme == "https":  # as the proxy in front says it (SECURE_PROXY_SSL_HEADER)
            environ["HTTP_X_FORWARDED_PROTO"] = "https"
        return environ

    def render(self, path):
        """(response, PageRecord, request) for an anonymous GET of `path`."""
        environ = self.environ(path)
        record = environ[BAKE_RECORD] = PageRecord()
        request = WSGIRequest(environ)
        # The handler's own __call__ would also send request_finished, which closes the
        # database connection after every page. The page's language is its own: the
        # job's messages keep the language they had.
        with translation.override(translation.get_language()):
            response = self.handler.get_response(request)
        return response, record, request


def _page_type(path):
    language = "ko" if path.startswith("/ko/") else "en"
    with translation.override(language):
        return resolve(path).view_name, language


class _Build:
    """One bake being written: its directory, its manifest and what it left live."""

    def __init__(self, root, prefix):
        self.directory = build_dir_new(root, prefix)
        self.pages, self.live = {}, []
        self.revisions = {
            table: [number, changed_at.isoformat()]
            for table, (number, changed_at) in revisions_read().items()
        }

    def write(self, path, response, tables):
        name = page_file(path)
        target = self.directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(response.content)
        headers = [(k, v) for k, v in response.items() if k.lower() not in SERVER_HEADERS]
        self.pages[path] = {
            "file": name,
            "sha256": hashlib.sha256(response.content).hexdigest(),
            "headers": headers,
            "tables": sorted(tables),
        }

    def manifest(self):
        return {
            "site_url": settings.SITE_URL,
            "valid_until": _next_midnight().timestamp(),
            "revisions": self.revisions,
            "pages": self.pages,
            "live": self.live,
        }


def _next_midnight():
    """A bake holds until the day ends: a page may show how old a statement is today."""
    tomorrow = timezone.localdate() + datetime.timedelta(days=1)
    return datetime.datetime.combine(
        tomorrow, datetime.time(), tzinfo=timezone.get_current_timezone()
    )


def _refuse_unless_ok(path, response):
    if response.status_code != 200:
        raise BakeRefused(
            lazy_format(
                _("%(path)s answered %(status)d; nothing was published."),
                path=path,
                status=response.status_code,
            )
        )


def _bakeable(request, response, record):
    return record.tables is not None and not record.variant and page_storable(request, response)


def _check(build, renderer):
    """Every file holds the bytes rendered for it, and a second live render of one page of
    each type gives the same bytes: a page that differs per render cannot be baked."""
    sampled = set()
    for path, page in list(build.pages.items()):
        written = (build.directory / page["file"]).read_bytes()
        if hashlib.sha256(written).hexdigest() != page["sha256"]:
            raise BakeRefused(lazy_format(_("%(path)s was not written whole."), path=path))
        page_type = _page_type(path)
        if page_type in sampled:
            continue
        sampled.add(page_type)
        response, _record, _request = renderer.render(path)
        if response.content != written:
            raise BakeRefused(
                lazy_format(
                    _("%(path)s renders differently each time; it cannot be baked."), path=path
                )
            )


def _render_all(build, renderer, paths, patterns, progress):
    for index, path in enumerate(paths):
        if index % 50 == 0:
            progress(
                5 + 80 * index // len(paths),
                lazy_format(
                    _("Rendering page %(number)d of %(count)d"), number=index + 1, count=len(paths)
                ),
            )
        response, record, request = renderer.render(path)
        _refuse_unless_ok(path, response)
        if holdout_hits(response.content, patterns):
            # Public readers never reach a holdout task; a page that names one means a
            # record carries its text into a public one. Name the page, so it can be fixed.
            raise BakeRefused(
                lazy_format(_("%(path)s shows holdout content; nothing was published."), path=path)
            )
        if _bakeable(request, response, record):
            build.write(path, response, record.tables)
        else:
            build.live.append(path)


def pages_bake(*, paths=None, job_run_id=None, progress=lambda percent, message="": None):
    """Render, check and publish every anonymous page of the sitemap (or only `paths`);
    return the manifest."""
    root = bake_root()
    progress(1, _("Reading the sitemap"))
    paths = sitemap_paths() if paths is None else paths
    patterns = holdout_patterns(holdout_needles())
    renderer = _Renderer(settings.SITE_URL)
    build = _Build(root, job_run_id or "inline")
    try:
        _render_all(build, renderer, paths, patterns, progress)
        progress(88, _("Checking the baked pages"))
        _check(build, renderer)
        manifest = build.manifest()
        with open(build.directory / MANIFEST, "w", encoding="utf-8") as stream:
            json.dump(manifest, stream, ensure_ascii=False)
        dir_switch(root, build.directory)
    except BaseException:
        shutil.rmtree(build.directory, ignore_errors=True)
        raise
    builds_prune(root, marker=MANIFEST, keep=KEEP_BUILDS)
    progress(100, _("Published"))
    return manifest


def bake_current():
    """The published bake's directory, or None before the first."""
    return dir_current(bake_root())
