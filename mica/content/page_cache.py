"""Whole public pages from the shared cache, keyed by the revisions of the tables they read.

A page's bytes are made of what its queries read (and of the URL, the language and
the settings). Rendering one records the tables it reads; the page is then valid
exactly as long as those tables' revisions stay where they were when it was
rendered. A committed change moves the revisions of the tables it wrote
(mica.content.changes), so the pages that read them render afresh on the next
request and every other cached page stays cached. Every answer carries a strong ETag (a hash of the
bytes) and Last-Modified (when what the page reads last changed) and answers 304 to a
matching conditional request. `Cache-Control: public, max-age=0, must-revalidate`
lets browsers and proxies keep a copy but ask before every use: a change is seen
at once, and asking costs a 304 without a body.

Only anonymous GET and HEAD requests are served from the cache; a request with a
session (a signed-in editor) renders afresh and is marked private. Never stored:
answers other than 200, streaming answers, answers that set a cookie, and pages
that carry a CSRF token (a form that posts).
"""

import hashlib
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.utils import translation
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date

from mica.content.reads import settings_generation, tables_recorded
from mica.content.revision import (
    NO_REVISION,
    revision_lines,
    revision_pending,
    revisions_held,
    revisions_read,
)

CACHE_CONTROL = {"public": True, "max_age": 0, "must_revalidate": True}
KEY_PREFIX = "page:"
# The tables a page read when it was last rendered, by URL: they choose its revisions.
READS_PREFIX = "page-reads:"
# The WSGI environ key under which the page bake (mica.site.bake) hands a PageRecord.
BAKE_RECORD = "mica.bake"
# Query strings are the reader's to invent (search terms, filters): such pages
# are kept briefly, so a flood of made-up queries cannot fill the shared cache.
QUERY_PAGE_SECONDS = 60


def _anonymous(request):
    # Without a session cookie nobody is signed in, and knowing it costs no query.
    return request.method in ("GET", "HEAD") and settings.SESSION_COOKIE_NAME not in request.COOKIES


def _address(request):
    parts = (
        str(settings_generation()),
        translation.get_language() or "",
        request.build_absolute_uri(),
    )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _cache_key(address, tables, revisions, variant_key):
    parts = [address, str(variant_key), *revision_lines(tables, revisions)]
    return KEY_PREFIX + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def page_last_modified(tables, revisions, variant_modified=None):
    changed = max(
        (revisions.get(table, NO_REVISION)[1] for table in tables), default=NO_REVISION[1]
    )
    return max(changed.timestamp(), variant_modified or 0)


class PageRecord:
    """What a page rendered for the bake read, filled in by public_page_cache.

    `tables` stays None for a view outside the page cache; `variant` says the page also
    shows state kept outside the database, which no table revision follows.
    """

    def __init__(self):
        self.tables = None
        self.variant = False


def _rendered_recording(view, request, args, kwargs):
    with tables_recorded() as reads:
        response = view(request, *args, **kwargs)
    return response, reads.watched()


def page_storable(request, response):
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        # The template asked for a CSRF token: the page holds a form that posts.
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
        and b"csrfmiddlewaretoken" not in response.content
    )


def _from_entry(entry):
    content, headers, _etag = entry
    response = HttpResponse(content)
    for name, value in headers:
        response[name] = value
    return response


def _validated(request, response, etag, last_modified):
    """The answer with its validators, or a 304 when the reader's copy is current."""
    response = (
        get_conditional_response(
            request, etag=etag, last_modified=int(last_modified), response=response
        )
        or response
    )
    response["ETag"] = etag
    response["Last-Modified"] = http_date(last_modified)
    patch_cache_control(response, **CACHE_CONTROL)
    # A signed-in reader's copy differs; shared caches must keep the two apart.
    patch_vary_headers(response, ("Cookie",))
    return response


def _rendered_afresh(response):
    if response.status_code == 200:
        patch_cache_control(response, private=True)
        patch_vary_headers(response, ("Cookie",))
    return response


def public_page_cache(view=None, *, variant=None):
    """Serve a public page from the shared cache.

    `variant(request)` may return (key part, last-modified timestamp or None) for
    a page that also shows state kept outside the database.
    """

    def decorate(view):
        @wraps(view)
        def cached_view(request, *args, **kwargs):
            timeout = settings.PAGE_CACHE_SECONDS
            if timeout <= 0:
                return view(request, *args, **kwargs)
            if not _anonymous(request) or revision_pending():
                return _rendered_afresh(view(request, *args, **kwargs))
            # Read before the page renders: a change committed meanwhile moves a
            # revision past these, so the page is never stored as newer than it is.
            revisions = revisions_read()
            variant_key, variant_modified = variant(request) if variant else ("", None)
            address = _address(request)
            # The bake needs what the page reads, so it always renders.
            record = request.META.get(BAKE_RECORD)
            tables = cache.get(READS_PREFIX + address) if record is None else None
            if tables is not None:
                entry = cache.get(_cache_key(address, tables, revisions, variant_key))
                if entry is not None:
                    response = _from_entry(entry)
                    modified = page_last_modified(tables, revisions, variant_modified)
                    return _validated(request, response, etag=entry[2], last_modified=modified)
            with revisions_held(revisions):
                response, tables = _rendered_recording(view, request, args, kwargs)
            if record is not None:
                record.tables, record.variant = tables, variant is not None
            if not page_storable(request, response):
                return response
            etag = f'"{hashlib.blake2b(response.content, digest_size=16).hexdigest()}"'
            if request.method == "GET":
                if request.META.get("QUERY_STRING"):
                    timeout = min(timeout, QUERY_PAGE_SECONDS)
                cache.set(READS_PREFIX + address, tables, timeout)
                entry = (response.content, list(response.items()), etag)
                cache.set(_cache_key(address, tables, revisions, variant_key), entry, timeout)
            modified = page_last_modified(tables, revisions, variant_modified)
            return _validated(request, response, etag=etag, last_modified=modified)

        return cached_view

    return decorate(view) if view is not None else decorate
