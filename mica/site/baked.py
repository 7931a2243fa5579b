"""Baked pages answered in front of Django: a WSGI layer around the project's application.

An anonymous GET or HEAD of a baked page (mica.site.bake), at its location exactly (a
query string only where the location has it: a later page of the catalogue,
`/tasks/?page=2`), is answered from its file before Django's URL resolution, sessions
and templates run, with the headers, ETag, Last-Modified, Vary and 304s the live page
cache gives. Everything else goes to Django: signed-in readers and anyone carrying
messages, forms, any other query string, the admin, the API, pages the bake left live,
and any page one of whose tables has moved since the bake read it, until the next bake
is published.

Per request this costs one read of one row in the database (the content's global
revision, which every commit on any node moves) and a readlink() of this node's copy of
the published bake. The manifest is read again when the copy changes, the table
revisions when the global revision does. The copy follows the published pointer in a
thread of its own (mica.content.builds.Follower); until it has, the older copy serves the pages
whose tables have not moved since, which are the same bytes.
"""

import logging
import os
import threading
import time

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.db import DatabaseError, connections
from django.http import parse_cookie
from django.http.request import split_domain_port, validate_host
from django.utils.http import parse_etags, parse_http_date_safe

from mica.content.builds import Follower
from mica.content.models import TableRevision
from mica.content.revision import NO_REVISION, revision_global, revisions_read
from mica.site.bake import BUILD_KIND, bake_root
from mica.site.bake_layers import MANIFEST, BakeView, LastModified

logger = logging.getLogger(__name__)

# Headers a 304 keeps, as django.utils.cache does.
NOT_MODIFIED_HEADERS = {
    "cache-control",
    "content-location",
    "etag",
    "expires",
    "last-modified",
    "vary",
}
# Conditions only Django answers (a 412 needs its rules).
DJANGO_CONDITIONS = ("HTTP_IF_MATCH", "HTTP_IF_UNMODIFIED_SINCE")


class BakedPage:
    def __init__(self, file, entry, last_modified):
        self.file = file
        self.tables = frozenset(entry["tables"])
        stored = [(k, v) for k, v in entry["headers"]] + [("Last-Modified", last_modified)]
        self.headers = stored + [("Content-Length", str(entry["size"]))]
        found = {k.lower(): v for k, v in stored}
        self.etag = found.get("etag")
        self.last_modified = parse_http_date_safe(last_modified)
        self.not_modified_headers = [(k, v) for k, v in stored if k.lower() in NOT_MODIFIED_HEADERS]

    def current_for(self, environ):
        """Whether the reader's copy is this page (If-None-Match, else If-Modified-Since)."""
        if_none_match = environ.get("HTTP_IF_NONE_MATCH")
        if if_none_match:
            etags = parse_etags(if_none_match)
            if etags == ["*"]:
                return True
            return self.etag is not None and self.etag.strip("W/") in (e.strip("W/") for e in etags)
        since = parse_http_date_safe(environ.get("HTTP_IF_MODIFIED_SINCE", ""))
        return since is not None and self.last_modified is not None and self.last_modified <= since

    def answer(self, environ, start_response):
        if self.current_for(environ):
            start_response("304 Not Modified", self.not_modified_headers)
            return []
        stream = open(self.file, "rb")  # noqa: SIM115 - the server closes it after sending
        start_response("200 OK", self.headers)
        if environ["REQUEST_METHOD"] == "HEAD":
            stream.close()
            return []
        wrapper = environ.get("wsgi.file_wrapper")
        return wrapper(stream, 1 << 16) if wrapper else _chunks(stream)


def _chunks(stream):
    with stream:
        while block := stream.read(1 << 16):
            yield block


class _Published:
    """The published bake as one process sees it: pages, and which of them are fresh."""

    def __init__(self, directory):
        self.view = BakeView(bake_root(), directory)
        manifest = self.view.manifest
        self.site_url = manifest["site_url"]
        self.valid_until = manifest["valid_until"]
        self.revisions = {t: tuple(v) for t, v in manifest["revisions"].items()}
        self.last_modified = LastModified(manifest["revisions"])
        self.pages = {}  # {path: BakedPage}, each made when first asked for
        self.moved = None  # the tables whose revision is not the bake's; None: unknown

    def follow(self, revisions):
        """Note the tables that moved since the bake read them (`revisions`: None, unknown)."""
        if revisions is None:
            self.moved = None
            return
        known = set(revisions) | set(self.revisions)
        self.moved = frozenset(
            table
            for table in known
            if _revision(revisions, table) != self.revisions.get(table, _NO_REVISION)
        )

    def page(self, path):
        page = self.pages.get(path)
        if page is None and path in self.view.pages:
            entry = self.view.pages[path]
            file = self.view.file(path)
            page = self.pages[path] = BakedPage(file, entry, self.last_modified(entry["tables"]))
        return page

    def fresh(self, path):
        page = self.page(path)
        if page is None or self.moved is None or not page.tables.isdisjoint(self.moved):
            return None
        return page


_NO_REVISION = (NO_REVISION[0], NO_REVISION[1].isoformat())


def _revision(revisions, table):
    number, changed_at = revisions.get(table, NO_REVISION)
    return (number, changed_at.isoformat())


def _revisions_now():
    try:
        return revisions_read()
    except DatabaseError:
        logger.exception("content revisions unreadable; baked pages go to Django meanwhile")
        return None


def _global_now():
    """The content's global revision, or None when the database cannot say (Django answers)."""
    try:
        return revision_global()
    except DatabaseError:
        # The connection may be broken for good (a restarted server): the next request
        # opens another.
        connections[TableRevision.objects.db].close_if_unusable_or_obsolete()
        return None


class BakedPages:
    """WSGI middleware: baked pages from their files, everything else from `application`."""

    def __init__(self, application):
        self.application = application
        self._lock = threading.Lock()
        self._seen = (None, None)  # (this node's copy of the bake, global revision)
        self._published = None
        self._follower = Follower(BUILD_KIND, bake_root, MANIFEST)

    def __call__(self, environ, start_response):
        page = self._page(environ) if _eligible(environ) else None
        if page is None:
            return self.application(environ, start_response)
        try:
            return page.answer(environ, start_response)
        except OSError:  # the build was pruned under this process: Django has the page
            return self.application(environ, start_response)

    def _page(self, environ):
        published = self._published_now()
        if published is None or published.site_url != settings.SITE_URL:
            return None
        if time.time() >= published.valid_until:  # made on an earlier day
            return None
        query = environ.get("QUERY_STRING", "")
        path = environ.get("PATH_INFO", "")
        return published.fresh(f"{path}?{query}" if query else path)

    def _published_now(self):
        self._follower.poke()
        revision = _global_now()
        if revision is None:
            return None
        seen = (_link_target(), revision)
        if seen == self._seen:
            return self._published
        with self._lock:
            if seen != self._seen:
                self._load(seen)
        return self._published

    def _load(self, seen):
        target, _stamp = seen
        published = self._published
        if target != self._seen[0]:
            published = None
            if target is not None:
                try:
                    published = _Published(bake_root() / target)
                except (OSError, ValueError, KeyError):
                    logger.exception("the published bake is unreadable; Django answers")
        if published is not None:
            published.follow(_revisions_now())
            if published.moved is None:
                seen = (target, "revisions unread")  # no revision equals it: read again next time
        # The bake first: a thread that sees the new `_seen` must find it.
        self._published, self._seen = published, seen


def _link_target():
    try:
        return os.readlink(bake_root() / "current")
    except OSError:
        return None


def _eligible(environ):
    """An anonymous GET or HEAD that Django would answer as is."""
    return (
        environ.get("REQUEST_METHOD") in ("GET", "HEAD")
        and not environ.get("SCRIPT_NAME")
        and not any(environ.get(condition) for condition in DJANGO_CONDITIONS)
        and _anonymous(environ.get("HTTP_COOKIE", ""))
        and _secure_enough(environ)
        and _host_allowed(environ)
    )


def _anonymous(cookie_header):
    # A session may be signed in; a messages cookie holds a notice the page must show.
    if not cookie_header:
        return True
    cookies = parse_cookie(cookie_header)
    return settings.SESSION_COOKIE_NAME not in cookies and CookieStorage.cookie_name not in cookies


def _secure_enough(environ):
    """False where Django would redirect the request to https first."""
    if not settings.SECURE_SSL_REDIRECT:
        return True
    if settings.SECURE_PROXY_SSL_HEADER:
        header, value = settings.SECURE_PROXY_SSL_HEADER
        return environ.get(header) == value
    return environ.get("wsgi.url_scheme") == "https"


def _host_allowed(environ):
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    if settings.USE_X_FORWARDED_HOST and environ.get("HTTP_X_FORWARDED_HOST"):
        host = environ["HTTP_X_FORWARDED_HOST"]
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)
