"""Whole public pages from the shared cache, keyed by the content revision.

A cached page is valid exactly as long as the content revision it was rendered
under: any committed change moves the revision (mica.content.changes), so the
next request renders afresh. Every answer carries a strong ETag (a hash of the
bytes) and Last-Modified (when the content last changed) and answers 304 to a
matching conditional request. `Cache-Control: public, max-age=0, must-revalidate`
lets browsers and proxies keep a copy but ask before every use: a change is seen
at once, and asking costs a 304 without a body.

Only anonymous GET and HEAD requests are served from the cache; a request with a
session (a signed-in editor) renders afresh and is marked private. Never stored:
answers other than 200, streaming answers, answers that set a cookie, and pages
that carry a CSRF token (a form that posts).
"""

import hashlib
import itertools
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.core.signals import setting_changed
from django.http import HttpResponse
from django.utils import translation
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date

from mica.content.revision import content_revision, revision_pending

CACHE_CONTROL = {"public": True, "max_age": 0, "must_revalidate": True}
KEY_PREFIX = "page:"
# Query strings are the reader's to invent (search terms, filters): such pages
# are kept briefly, so a flood of made-up queries cannot fill the shared cache.
QUERY_PAGE_SECONDS = 60

# Settings change only under tests (override_settings); a page rendered under
# other settings must not be served after them.
_settings_generations = itertools.count()
_settings_generation = next(_settings_generations)


def _settings_changed(**kwargs):
    global _settings_generation
    _settings_generation = next(_settings_generations)


setting_changed.connect(_settings_changed, dispatch_uid="page-cache-settings-changed")


def _anonymous(request):
    # Without a session cookie nobody is signed in, and knowing it costs no query.
    return request.method in ("GET", "HEAD") and settings.SESSION_COOKIE_NAME not in request.COOKIES


def _cache_key(request, revision, variant_key):
    number, changed_at = revision
    parts = (
        str(number),
        # The time too: a rolled-back transaction can hand the same number out twice.
        changed_at.isoformat(),
        str(_settings_generation),
        translation.get_language() or "",
        str(variant_key),
        request.build_absolute_uri(),
    )
    return KEY_PREFIX + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _storable(request, response):
    return (
        response.status_code == 200
        and not response.streaming
        and not response.cookies
        # The template asked for a CSRF token: the page holds a form that posts.
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
        and b"csrfmiddlewaretoken" not in response.content
    )


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
            revision = content_revision()
            last_modified, variant_key = revision[1].timestamp(), ""
            if variant is not None:
                variant_key, variant_modified = variant(request)
                last_modified = max(last_modified, variant_modified or 0)
            key = _cache_key(request, revision, variant_key)
            entry = cache.get(key)
            if entry is not None:
                content, headers, etag = entry
                response = HttpResponse(content)
                for name, value in headers:
                    response[name] = value
                return _validated(request, response, etag, last_modified)
            response = view(request, *args, **kwargs)
            if not _storable(request, response):
                return response
            etag = f'"{hashlib.blake2b(response.content, digest_size=16).hexdigest()}"'
            if request.method == "GET":
                if request.META.get("QUERY_STRING"):
                    timeout = min(timeout, QUERY_PAGE_SECONDS)
                cache.set(key, (response.content, list(response.items()), etag), timeout)
            return _validated(request, response, etag, last_modified)

        return cached_view

    return decorate(view) if view is not None else decorate
