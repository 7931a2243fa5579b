"""The bake: every anonymous public page of the sitemap, in both languages, as files.

After each committed content change (debounced as the exports are), a job renders
every location of the sitemap through the whole Django stack, as an anonymous reader
gets it, into a fresh directory; checks it; and publishes it (mica.content.builds: every file
stored once in the build store, then the pointer moved in the database).
mica.site.baked answers in front of Django from each node's copy of the published build.

A build holds `pages.json` (its marker) and one file a page it rendered. For each page
the manifest keeps its response headers and the tables it read; for the whole build, the
table revisions read before the first page rendered. A page is served from the bake
only while none of its tables has moved since: a change is seen at once, on the pages
it affects, and the next bake catches up.

A bake is incremental by the same rule: a page of the previous bake none of whose
tables has moved since is the same bytes a render would give (same code, settings,
address and day), so it is taken from there instead of rendered, left in the layer that
holds it (mica.site.bake_layers). `full=True` renders every page (the daily bake, a
restore, on demand).

Left to Django, and so rendered live: pages outside the page cache, pages that hold a
form, and pages that also show state no table revision follows (the downloads page
shows the published export set).
"""

import datetime
import hashlib
import io
import json
import logging
import multiprocessing
import os
import re
import shutil
import signal
import sys
import time
from collections import defaultdict
from functools import cache
from pathlib import Path

from django.conf import settings
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.db import DatabaseError, connections
from django.http import QueryDict
from django.urls import resolve
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from catalogue.views import task_details_prepare, task_list_window
from mica.content.builds import (
    COPY_SUFFIX,
    build_below,
    build_follow,
    build_made_with,
    build_publish,
    file_digest,
    revisions_document,
    tables_moved,
)
from mica.content.models import PublicationKind
from mica.content.page_cache import (
    BAKE_RECORD,
    PageRecord,
    page_storable,
)
from mica.content.publication_log import publication_log_append
from mica.content.revision import GLOBAL, NO_REVISION, revision_pending, revisions_read
from mica.content.rows import row_changes_prune, row_changes_since, rows_moved_elsewhere
from mica.errors import DomainError
from mica.exports.holdout import holdout_hits, holdout_needles, holdout_patterns
from mica.published_dirs import build_dir_new, builds_prune, dir_current
from mica.site.bake_layers import (
    MANIFEST,
    MAX_LAYERS,
    BakeView,
    headers_stored,
    layer_remember,
    layers_below,
)
from mica.site.ledger import home_window
from mica.site.sitemaps import SITEMAPS
from mica.text import lazy_format

logger = logging.getLogger(__name__)

# The kind of build the pointer of the baked pages names (mica.content.builds).
BUILD_KIND = "pages"
KEEP_BUILDS = 2
# Task pages a process prepares and renders together.
BATCH = 100
# Fewer pages than this render in the bake's own process: starting renderers in processes
# of their own, each filling its own caches, costs more than a few dozen renders.
FORK_FROM_PAGES = 60
# Headers the server sets for each answer, never part of a page.
SERVER_HEADERS = {"date", "server", "connection", "content-length"}


# Views whose page shows the scoped rows of one key (mica.content.rows): view name ->
# (scope, the URL's argument that names the key). A commit that wrote those tables only
# for other keys leaves the page as it was.
ROW_SCOPED_VIEWS = {"catalogue:task-detail": ("task", "slug")}

# Views whose pages each show the scoped rows of many keys, a window onto a long list
# (a page of the catalogue): view name -> (scope, window(query, memo)). window() gives,
# as plain values read in a query or two (memo: what it read, kept for the bake's other
# pages), the keys the page lists and everything else the page shows of the scope's
# tables (how many there are, counts); or None for a page it does not describe. A
# commit that wrote those tables only for other keys, and changed neither, leaves the
# page as it was.
WINDOW_VIEWS = {
    "catalogue:task-list": ("task", task_list_window),
    "site:home": ("task", home_window),
}

# Views whose pages the bake reads by the hundred: view name -> (the URL's argument that
# names the page, what makes that many pages' parts in one read).
PREPARED_VIEWS = {"catalogue:task-detail": ("slug", task_details_prepare)}


class BakeRefused(DomainError):
    """The bake found a page it must not publish; the published bake is left as it was."""


def bake_root():
    return Path(settings.PAGE_BAKE_DIR)


def sitemap_paths():
    """Every location of the sitemap, both languages, as paths under the site's address.

    The sitemap's own get_urls() also builds every alternate of every location; the
    bake needs the locations alone, and for ten thousand tasks that is seconds saved.
    """
    paths = []
    for sitemap_class in SITEMAPS.values():
        sitemap = sitemap_class()
        items = sitemap.items()
        for language in sitemap.languages:
            with translation.override(language):
                paths.extend(sitemap.location(item) for item in items)
    return list(dict.fromkeys(paths))


# The query a baked location may carry (a page of a listing, `?page=2`): one name and one
# value, which also name its file.
BAKED_QUERY = re.compile(r"[a-z_]+=[0-9a-z-]+")


def page_file(path):
    """Where a page's bytes live in a build: its path, as a static site lays it out; a
    location with a query beside its path's own page (`tasks/index.page=2.html`)."""
    location, _sep, query = path.partition("?")
    relative = location.strip("/")
    folder = f"{relative}/" if relative else ""
    if not query:
        return f"{folder}index.html"
    if not BAKED_QUERY.fullmatch(query):
        raise ValueError(f"{path}: a baked location's query is one name=value")
    return f"{folder}index.{query}.html"


class _Renderer:
    """Renders pages through the whole middleware stack, as a reader's request would be."""

    def __init__(self, site_url):
        self.handler = WSGIHandler()
        # Page types rendered a second time by this process, to compare (_outcome).
        self.sampled = set()
        scheme, _sep, self.host = site_url.partition("://")
        self.scheme = scheme
        self.server_name, _sep, port = self.host.partition(":")
        self.port = port or ("443" if scheme == "https" else "80")

    def environ(self, path):
        location, _sep, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": location,
            "SCRIPT_NAME": "",
            "QUERY_STRING": query,
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


def _language(path):
    return "ko" if path.startswith("/ko/") else "en"


@cache  # emptied after each bake
def _resolved(path):
    with translation.override(_language(path)):
        return resolve(path.partition("?")[0])


def _page_type(path):
    return _resolved(path).view_name, _language(path)


class _Build:
    """One bake being written: its directory, its manifest and what it left live."""

    def __init__(self, root, prefix, patterns):
        self.directory = build_dir_new(root, prefix)
        self.holdout = holdout_fingerprint(patterns)
        self.pages, self.live, self.reused = {}, [], set()
        # Layered on the previous bake (mica.site.bake_layers): the layers below, nearest
        # first, the directory of each page taken from them, and the pages they hold that
        # this bake drops.
        self.below, self.where, self.removed = [], {}, []
        # Page types (view, language) a render of this bake, or of the bake it takes pages
        # from, found to give the same bytes twice (_renders_the_same).
        self.steady = set()
        # A page may show how old a statement is today: a bake holds for its day only.
        self.made_with = build_made_with(valid_until=_next_midnight().timestamp())
        self.read = read = revisions_read()
        self.revision = read.get(GLOBAL, NO_REVISION)[0]
        self.revisions = revisions_document(read)

    def manifest(self):
        return {
            **self.made_with,
            "revisions": self.revisions,
            "holdout": self.holdout,
            "pages": dict(sorted(self.pages.items())),
            "live": sorted(self.live),
            "rendered": len(self.pages) - len(self.reused),
            "steady": [list(page_type) for page_type in sorted(self.steady)],
            "total": len(self.pages),
        }

    def layer(self, manifest):
        """What this bake writes of `manifest`: on a layer below, only its own pages."""
        if not self.below:
            return manifest
        own = {path: page for path, page in manifest["pages"].items() if path not in self.reused}
        return {**manifest, "pages": own, "below": self.below, "removed": sorted(self.removed)}


def _next_midnight():
    """A bake holds until the day ends: a page may show how old a statement is today."""
    tomorrow = timezone.localdate() + datetime.timedelta(days=1)
    return datetime.datetime.combine(
        tomorrow, datetime.time(), tzinfo=timezone.get_current_timezone()
    )


def _bakeable(request, response, record):
    return record.tables is not None and not record.variant and page_storable(request, response)


def holdout_fingerprint(patterns):
    """A digest of every spelling the holdout scan looks for: a page linked from a bake
    scanned for the same spellings needs no second scan."""
    return hashlib.sha256(b"\n".join(sorted(patterns))).hexdigest()


def _written_whole(build, patterns, rescan):
    """Every rendered file holds the bytes rendered for it, and, when the holdout moved
    since the previous bake (`rescan`), no page linked from it shows holdout content as
    the holdout stands now. Linked files were checked whole by the bake that wrote them,
    and rendered ones were scanned as they were rendered."""
    for path, page in build.pages.items():
        if path in build.reused and not rescan:
            continue
        written = (build.where.get(path, build.directory) / page["file"]).read_bytes()
        if path not in build.reused and hashlib.sha256(written).hexdigest() != page["sha256"]:
            raise BakeRefused(lazy_format(_("%(path)s was not written whole."), path=path))
        if path in build.reused and holdout_hits(written, patterns):
            _refuse_if("holdout", path, None)


# Page types the bake it takes pages from found steady (emptied after each bake): that
# bake was made with the same code, settings and address, so a second render of them
# would show what it showed. Only new page types are rendered twice.
_steady = set()


def _renders_the_same(renderer, path, response):
    """A second live render of the first page of each type gives the same bytes: a page
    that differs per render cannot be baked."""
    page_type = _page_type(path)
    if page_type in renderer.sampled or page_type in _steady:
        return True
    renderer.sampled.add(page_type)
    again, _record, _request = renderer.render(path)
    return again.content == response.content


def _page_write(directory, path, response, tables):
    """Write the page's bytes; return its manifest entry."""
    name = page_file(path)
    target = directory / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(response.content)
    return {
        "file": name,
        "sha256": hashlib.sha256(response.content).hexdigest(),
        "size": len(response.content),
        "headers": headers_stored(
            (k, v) for k, v in response.items() if k.lower() not in SERVER_HEADERS
        ),
        "tables": sorted(tables),
    }


def _outcome(renderer, directory, path, patterns):
    """(what became of the page, path, its status or manifest entry)."""
    # Read before the page renders: what changes meanwhile differs from it next time,
    # and the page is rendered again then.
    window = _window(path)
    response, record, request = renderer.render(path)
    if response.status_code != 200:
        return ("failed", path, response.status_code)
    if holdout_hits(response.content, patterns):
        return ("holdout", path, None)
    if not _bakeable(request, response, record):
        return ("live", path, None)
    if not _renders_the_same(renderer, path, response):
        return ("unsteady", path, None)
    entry = _page_write(directory, path, response, record.tables)
    entry = {**entry, "scope": _row_scope(path)}
    if window is not None:
        entry["window"] = window
    return ("baked", path, entry)


def _prepared(paths):
    """Make ahead, in one read a language, the parts the pages of `paths` would each
    read alone (PREPARED_VIEWS)."""
    wanted = defaultdict(list)
    for path in paths:
        view_name, language = _page_type(path)
        if view_name in PREPARED_VIEWS:
            argument, _prepare = PREPARED_VIEWS[view_name]
            wanted[view_name, language].append(_resolved(path).kwargs[argument])
    for (view_name, language), values in wanted.items():
        with translation.override(language):
            PREPARED_VIEWS[view_name][1](values)


def _batch_outcomes(renderer, directory, paths, patterns):
    _prepared(paths)
    outcomes = []
    for path in paths:
        outcomes.append(_outcome(renderer, directory, path, patterns))
        _pages_counted()
    return outcomes


_child_renderer = None
# Pages rendered so far by every process of the bake: a counter in memory shared with
# the forked children, which the parent reads to report progress page by page while a
# child is still inside a batch of a hundred.
_rendered_count = None


def _pages_counted():
    if _rendered_count is not None:
        with _rendered_count.get_lock():
            _rendered_count.value += 1


def _child_signals():
    """A child forked from a Celery worker would answer the pool's SIGTERM with the
    worker's own handler, and log a "Warm shutdown" of a worker that is not stopping."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop


def _batch_in_child(arguments):
    """A batch of pages in a forked process, with a renderer of its own."""
    global _child_renderer
    directory, paths, patterns, site_url = arguments
    if _child_renderer is None:
        _child_renderer = _Renderer(site_url)
    return _batch_outcomes(_child_renderer, Path(directory), paths, patterns)


def _batches(paths):
    """The pages of prepared views by the hundred, every other page alone: the long ones
    (a whole catalogue on one page) then go to whichever process is free."""
    alone = [[path] for path in paths if _page_type(path)[0] not in PREPARED_VIEWS]
    prepared = [path for path in paths if _page_type(path)[0] in PREPARED_VIEWS]
    return alone + [prepared[i : i + BATCH] for i in range(0, len(prepared), BATCH)]


def _processes(batches, pages):
    """How many processes render: one for a few pages, or where forking would break
    something."""
    wanted = min(settings.PAGE_BAKE_PROCESSES, batches)
    connections_open = connections.all(initialized_only=True)
    if (
        wanted <= 1
        or pages < FORK_FROM_PAGES
        # A prefork worker's child may not have children of its own.
        or multiprocessing.current_process().daemon
        # An open transaction is this process's own; an in-memory database dies with
        # the connections closed before the fork.
        or any(c.in_atomic_block for c in connections_open)
        or any(c.vendor == "sqlite" and c.is_in_memory_db() for c in connections.all())
    ):
        return 1
    return wanted


def _outcome_batches(renderer, directory, paths, patterns):
    batches = _batches(paths)
    processes = _processes(len(batches), len(paths))
    if processes == 1:
        for batch in batches:
            _prepared(batch)
            for path in batch:  # one at a time, so each page is reported as it is done
                outcome = _outcome(renderer, directory, path, patterns)
                _pages_counted()
                yield [outcome]
        return
    # Each child opens its own connections; sharing the parent's would mix their replies.
    connections.close_all()
    arguments = [(str(directory), batch, patterns, settings.SITE_URL) for batch in batches]
    pool = multiprocessing.get_context("fork").Pool(processes, initializer=_child_signals)
    try:
        yield from _while_waiting(pool.imap_unordered(_batch_in_child, arguments))
    except BaseException:
        pool.terminate()  # a page refused the bake, or it was stopped: the rest is not wanted
        raise
    else:
        pool.close()
    finally:
        pool.join()


def _while_waiting(results):
    """Each batch's outcomes as it comes, and an empty list whenever none came for a
    progress interval: the caller reports the pages the children counted meanwhile."""
    while True:
        try:
            yield results.next(timeout=max(settings.JOB_PROGRESS_SECONDS, 0.1))
        except multiprocessing.TimeoutError:
            yield []
        except StopIteration:
            return


class _Previous:
    """What a bake reuses of this node's latest one: its layers (a BakeView), the pages
    still what a render would give ({path: entry}), and whether the holdout moved since
    they were scanned."""

    def __init__(self, view=None, pages=None, holdout_moved=True):
        self.view, self.pages, self.holdout_moved = view, pages or {}, holdout_moved
        self.manifest = view.manifest if view else None

    def layer_on(self):
        """Whether this bake can be a layer on it, or must lay every page out again."""
        return self.view is not None and self.view.depth < MAX_LAYERS

    def steady(self):
        """The page types the latest bake found steady (a bake made the same way)."""
        return {tuple(page_type) for page_type in (self.manifest or {}).get("steady", ())}

    def current_for(self, build, paths):
        """Whether the latest bake is what this one would publish: made the same way, from
        the same revisions and holdout, of the same pages. A restart with nothing to do
        then leaves it as it is instead of making a layer with nothing in it."""
        manifest = self.manifest
        return (
            manifest is not None
            and not self.holdout_moved
            and manifest["revisions"] == build.revisions
            and len(self.pages) == len(manifest["pages"])
            and set(paths) == manifest["pages"].keys() | set(manifest["live"])
        )


def _previous_pages(root, build):
    """_Previous of the pages of this node's latest bake none of whose tables (or, for a
    row-scoped page, rows) moved since."""
    try:
        build_follow(BUILD_KIND, root, MANIFEST)
    except (OSError, DatabaseError):
        logger.exception("the published bake could not be fetched; every page is rendered")
    try:
        view = BakeView(root, bake_current())
    except (TypeError, OSError, ValueError, KeyError):
        return _Previous()
    manifest = view.manifest
    if any(manifest.get(key) != value for key, value in build.made_with.items()):
        return _Previous()
    moved = tables_moved(manifest["revisions"], build.revisions)
    since = manifest["revisions"].get(GLOBAL, NO_REVISION)[0]
    moved_rows = row_changes_since(since, build.revision)
    pages = {
        path: entry
        for path, entry in manifest["pages"].items()
        if not _page_moved(path, entry, moved & set(entry["tables"]), moved_rows)
    }
    return _Previous(view, pages, manifest.get("holdout") != build.holdout)


def _row_scope(path):
    """[scope, key] of a page that shows the scoped rows of one key (ROW_SCOPED_VIEWS),
    kept in its manifest entry so the next bake need not resolve twenty thousand paths."""
    scope = ROW_SCOPED_VIEWS.get(_page_type(path)[0])
    if scope is None:
        return None
    name, argument = scope
    return [name, _resolved(path).kwargs[argument]]


def _page_moved(path, entry, tables, moved_rows):
    """Whether the page must be rendered again, `tables` of its own having moved."""
    if tables and entry.get("window"):
        name, keys, digest = entry["window"]
        if _window(path) != [name, keys, digest]:
            return True
        return bool(tables - rows_moved_elsewhere(name, keys, tables, moved_rows))
    scope = (entry["scope"] if "scope" in entry else _row_scope(path)) if tables else None
    if scope:
        name, key = scope
        tables = tables - rows_moved_elsewhere(name, [key], tables, moved_rows)
    return bool(tables)


# What the window() of WINDOW_VIEWS read during this bake (emptied after it): the bake's
# pages of one listing share one read of it.
_window_reads = {}
# {id of a value kept in _window_reads: its JSON} (emptied with it).
_window_encoded = {}


def _window(path):
    """[scope, keys, digest of all it shows of the scope's tables] of a page of a
    WINDOW_VIEWS view, or None."""
    view_name = _page_type(path)[0]
    if view_name not in WINDOW_VIEWS:
        return None
    name, window = WINDOW_VIEWS[view_name]
    query = QueryDict(path.partition("?")[2])
    shown = window(query, _window_reads.setdefault(view_name, {}))
    if shown is None:
        return None
    keys, rest = shown
    memo = _window_reads[view_name]
    parts = [json.dumps(list(keys))]
    parts += [f"{part}={_encoded(value, memo)}" for part, value in sorted(rest.items())]
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return [name, list(keys), digest]


def _encoded(value, memo):
    """The JSON of one thing a window shows. What every page of the listing shows alike
    (the counts the window keeps in `memo`) is encoded once, not once a page: two
    hundred pages of the catalogue each encoding the same counts took a quarter second."""
    if not any(value is kept for kept in memo.values()):
        return json.dumps(value, sort_keys=True)
    if id(value) not in _window_encoded:
        _window_encoded[id(value)] = json.dumps(value, sort_keys=True)
    return _window_encoded[id(value)]


def _link(build, directory, entry, folders):
    """Link a page's file from a layer below into this build, which lays every page out
    itself. `folders`: those this bake has made already (twenty thousand pages are as
    many folders, each made once)."""
    name = entry["file"]
    source, target = os.path.join(directory, name), os.path.join(build.directory, name)
    folder = os.path.dirname(target)
    if folder not in folders:
        try:  # its parent is there already, mostly: one call, not makedirs' two
            os.mkdir(folder)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
        folders.add(folder)
    try:
        os.link(source, target)
    except OSError:  # another file system, or pruned meanwhile: copy what is there
        shutil.copyfile(source, target)


def _reused_paths(build, paths, previous):
    """Take every page of `paths` the previous bake still holds as is, leaving it in its
    layer, or linking it into this build when this one lays every page out; return the
    rest."""
    layered = previous.layer_on()
    rest, folders = [], set()
    for path in paths:
        entry = previous.pages.get(path)
        if entry is None:
            rest.append(path)
            continue
        directory = previous.view.where[path]
        if layered:
            build.where[path] = directory
        else:
            _link(build, directory, entry, folders)
        build.pages[path] = entry
        build.reused.add(path)
    if layered and build.reused:  # a bake that renders every page needs nothing below
        below = previous.view.directory.name.removesuffix(COPY_SUFFIX)
        build.below = [below, *layers_below(previous.manifest)]
    return rest


def _layer_complete(build, previous):
    """The pages the layers below hold that this bake drops (gone from the sitemap, or
    left live now): the layer names them, or the chain would still serve them."""
    if build.below:
        build.removed = [path for path in previous.view.pages if path not in build.pages]


def _render_all(build, renderer, paths, patterns, progress):
    global _rendered_count
    if not paths:
        return
    report = _ProgressReport(progress, len(paths))
    _rendered_count = multiprocessing.get_context("fork").Value("q", 0)
    try:
        for outcomes in _outcome_batches(renderer, build.directory, paths, patterns):
            for kind, path, detail in outcomes:
                _refuse_if(kind, path, detail)
                if kind == "baked":
                    build.pages[path] = detail
                    build.steady.add(_page_type(path))
                else:
                    build.live.append(path)
            report(_rendered_count.value)
    finally:
        _rendered_count = None


class _ProgressReport:
    """Reports the pages rendered so far, at most once a progress interval (each report
    is a write to the run's row), and always the last one."""

    def __init__(self, progress, count):
        self.progress, self.count = progress, count
        self.reported, self.at = 0, None

    def __call__(self, done):
        now = time.monotonic()
        due = self.at is None or now - self.at >= settings.JOB_PROGRESS_SECONDS
        if done == self.reported or not (due or done == self.count):
            return
        self.reported, self.at = done, now
        self.progress(
            5 + 80 * done // self.count,
            lazy_format(_("Rendered %(number)d of %(count)d pages"), number=done, count=self.count),
        )


def _refuse_if(kind, path, status):
    if kind == "failed":
        raise BakeRefused(
            lazy_format(
                _("%(path)s answered %(status)d; nothing was published."), path=path, status=status
            )
        )
    if kind == "unsteady":
        raise BakeRefused(
            lazy_format(_("%(path)s renders differently each time; it cannot be baked."), path=path)
        )
    if kind == "holdout":
        # Public readers never reach a holdout task; a page that names one means a
        # record carries its text into a public one. Name the page, so it can be fixed.
        raise BakeRefused(
            lazy_format(_("%(path)s shows holdout content; nothing was published."), path=path)
        )


def pages_bake(
    *,
    paths=None,
    job_run_id=None,
    full=False,
    publish=True,
    progress=lambda percent, message="": None,
):
    """Render, check and publish every anonymous page of the sitemap (or only `paths`),
    rendering only those whose tables moved since the previous bake unless `full`;
    return the manifest. Without `publish`, the checked bake is thrown away: its manifest
    says what it would have published."""
    root = bake_root()
    progress(1, _("Reading the sitemap"))
    paths = sitemap_paths() if paths is None else paths
    patterns = holdout_patterns(holdout_needles())
    renderer = _Renderer(settings.SITE_URL)
    build = _Build(root, job_run_id or "inline", patterns)
    previous = _Previous()
    try:
        # A transaction holding changes the revisions do not count yet cannot tell what
        # moved: it renders every page.
        if not full and not revision_pending():
            progress(2, _("Finding the pages the last bake still holds"))
            previous = _previous_pages(root, build)
            if publish and previous.current_for(build, paths):
                shutil.rmtree(build.directory)
                progress(100, _("Nothing changed since the published bake"))
                return {**previous.manifest, "rendered": 0}
            paths = _reused_paths(build, paths, previous)
            _steady.update(previous.steady())
            build.steady |= _steady
            progress(5, lazy_format(_("Pages to render: %(number)d"), number=len(paths)))
        _render_all(build, renderer, paths, patterns, progress)
        progress(88, _("Checking the baked pages"))
        _written_whole(build, patterns, rescan=previous.holdout_moved)
        _layer_complete(build, previous)
        manifest = build.manifest()
        layer = build.layer(manifest)
        # json.dumps, not json.dump: only the one-shot encoder is the C one, and a
        # manifest of twenty thousand pages took seconds through the other.
        (build.directory / MANIFEST).write_text(
            json.dumps(layer, ensure_ascii=False), encoding="utf-8"
        )
        layer_remember(build.directory, layer)
        if publish:
            progress(92, _("Storing the baked pages"))
            _publish(root, build, layer)
        else:
            shutil.rmtree(build.directory)
    except BaseException:
        shutil.rmtree(build.directory, ignore_errors=True)
        raise
    finally:
        _resolved.cache_clear()
        _window_reads.clear()
        _window_encoded.clear()
        _steady.clear()
    builds_prune(
        root, marker=MANIFEST, keep=KEEP_BUILDS, below=lambda b: build_below(BUILD_KIND, b)
    )
    progress(100, _("Published") if publish else _("Checked; not published"))
    return manifest


def _logged(summary, files):
    """What appends the bake's entry to the publication log, once its pointer moves."""

    def log(published):
        subject = {
            "build": published.name,
            "build_id": published.pk,
            "pages": summary["pages"],
            "manifest_sha256": files[MANIFEST],
        }
        publication_log_append(kind=PublicationKind.BAKE, subject=subject)

    return log


def _publish(root, build, layer):
    files = {page["file"]: page["sha256"] for page in layer["pages"].values()}
    files[MANIFEST] = file_digest(build.directory / MANIFEST)
    # A follower fetches the layers below too (mica.content.builds.build_follow).
    summary = {"pages": len(build.pages), "live": len(layer["live"]), "below": build.below}
    published = build_publish(
        kind=BUILD_KIND,
        root=root,
        directory=build.directory,
        files=files,
        revision=build.revision,
        summary=summary,
        published_with=_logged(summary, files),
    )
    if published is None:
        # A bake of newer content was published meanwhile: this one is not wanted.
        shutil.rmtree(build.directory, ignore_errors=True)
    else:
        row_changes_prune(build.revision)


def bake_current():
    """The published bake's top layer's directory, or None before the first."""
    return dir_current(bake_root())


def bake_published():
    """The published bake as its layers resolve it (a BakeView), or None before the first."""
    directory = bake_current()
    return None if directory is None else BakeView(bake_root(), directory)
