from django.conf import settings
from django.http import HttpResponsePermanentRedirect

from mica.site.i18n import ENGLISH_PREFIX_RE


class EnglishPrefixRedirectMiddleware:
    """English lives unprefixed: /en and /en/... redirect permanently to it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        match = ENGLISH_PREFIX_RE.match(request.path_info)
        if match:
            target = "/" + (match.group("rest") or "")
            query = request.META.get("QUERY_STRING", "")
            if query:
                target += "?" + query
            return HttpResponsePermanentRedirect(target)
        return self.get_response(request)


class RobotsHeaderMiddleware:
    """Say `noindex` in a header too, so non-HTML answers carry it as well."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not settings.PUBLIC_SITE:
            response.headers.setdefault("X-Robots-Tag", "noindex, nofollow")
        return response
