from urllib.parse import urlsplit

from csp.constants import SELF, UNSAFE_INLINE
from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpResponseBadRequest, HttpResponsePermanentRedirect
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.http import escape_leading_slashes
from django.utils.translation import gettext

from mica.site.i18n import ENGLISH_PREFIX_RE

# Features no page of the portal uses: a script that got in still cannot ask for them.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in ("camera", "microphone", "geolocation", "payment", "usb", "browsing-topics")
)


class EnglishPrefixRedirectMiddleware:
    """English lives unprefixed: /en and /en/... redirect permanently to it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        match = ENGLISH_PREFIX_RE.match(request.path_info)
        if match:
            # /en//evil.example would otherwise answer Location: //evil.example, which
            # browsers read as another host: a leading // is kept a path on this site.
            target = escape_leading_slashes("/" + (match.group("rest") or ""))
            query = request.META.get("QUERY_STRING", "")
            if query:
                target += "?" + query
            return HttpResponsePermanentRedirect(target)
        return self.get_response(request)


# Pages under /api/ in the public site's URLs (mica.site.urls), in English here and under
# each language's prefix.
API_PAGES = ("/api/docs/",)


class ApiLanguageMiddleware:
    """The API speaks the reader's language: /api/ has no language prefix, so the
    Accept-Language header (or the language cookie) chooses it, where LocaleMiddleware
    would answer every unprefixed path in English. Refusals, the schema and its examples
    follow it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The API reference is a page like the others, one a language (/ko/api/docs/), so
        # that the bake and the caches hold one copy a URL, never one that varies.
        path = request.path_info
        if not path.startswith("/api/") or path.startswith(API_PAGES):
            return self.get_response(request)
        language = translation.get_language_from_request(request)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        response.headers.setdefault("Content-Language", language)
        patch_vary_headers(response, ["Accept-Language"])
        return response


class RobotsHeaderMiddleware:
    """Say `noindex` in a header too, so non-HTML answers carry it as well."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not settings.PUBLIC_SITE:
            response.headers.setdefault("X-Robots-Tag", "noindex, nofollow")
        return response


class PermissionsPolicyMiddleware:
    """Permissions-Policy on every answer, whatever view or middleware made it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        return response


class AdminStylePolicyMiddleware:
    """Django's admin pages alone may use inline styles; scripts stay 'self' everywhere.

    The admin writes inline <style> blocks and style attributes that cannot carry a
    nonce. Runs inside csp.middleware.CSPMiddleware, which reads the replacement left
    on the response (as django-csp's own @csp_replace does).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is not None and match.app_name == "admin":
            response._csp_replace = {"style-src": [SELF, UNSAFE_INLINE]}
        return response


def _leads_somewhere(target):
    """Whether a `next` names a page of this site (a path its URLconf resolves)."""
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return False
    # Korean paths resolve only with Korean active (i18n_patterns).
    language = translation.get_language_from_path(parts.path) or settings.LANGUAGE_CODE
    with translation.override(language):
        try:
            resolve(parts.path)
        except Resolver404:
            return False
    return True


class AdminLoginNextMiddleware:
    """Signing in to the admin with a `next` that leads nowhere on this site lands on the
    admin index. Django drops an off-site `next`, and a path that resolves to nothing
    it follows to a 404; without `next` the admin login leads to the admin index."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.resolver_match.view_name != "admin:login":
            return None
        for method in ("GET", "POST"):
            query = getattr(request, method)
            target = query.get(REDIRECT_FIELD_NAME)
            if target is not None and not _leads_somewhere(target):
                query = query.copy()
                del query[REDIRECT_FIELD_NAME]
                setattr(request, method, query)
        return None


class NulInputMiddleware:
    """Refuse a query string or form holding a NUL character, before any view or query
    sees it: no text field takes one, and PostgreSQL refuses it with an error mid-render.
    (JSON bodies are refused by mica.parsers.BoundedJSONParser.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The API reads its own bodies (and refuses NUL there): its forms stay unread here,
        # so DRF can still answer a form body with 415.
        form = None if request.path.startswith("/api/") else request.POST
        if _holds_nul(request.GET) or (form is not None and _holds_nul(form)):
            return HttpResponseBadRequest(
                gettext("The request holds a NUL character, which no field accepts."),
                content_type="text/plain; charset=utf-8",
            )
        return self.get_response(request)


def _holds_nul(data):
    return any(
        "\x00" in key or any("\x00" in value for value in values) for key, values in data.lists()
    )
