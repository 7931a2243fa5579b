from django.conf import settings
from django.utils import translation

from mica.content.fragments import computed
from mica.methodology.selectors import edition_stamp
from mica.site.i18n import localized_path
from mica.site.navigation import routed_pages

LANGUAGE_SWITCH = [("en", "English"), ("ko", "한국어")]


def _with_query(path, request):
    query = request.META.get("QUERY_STRING", "")
    return f"{path}?{query}" if query else path


def site_shell(request):
    """What every page's shell needs: languages, alternates, navigation, edition."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    path = request.path
    switch = [
        {
            "code": code,
            "label": label,
            "url": _with_query(localized_path(path, code), request),
            "current": code == language,
        }
        for code, label in LANGUAGE_SWITCH
    ]
    # Absolute addresses name the configured site, never the Host header a request
    # came with (cached pages would otherwise hand one reader's Host to the next).
    site = settings.SITE_URL
    alternates = [
        {"hreflang": code, "url": site + localized_path(path, code)}
        for code, _label in LANGUAGE_SWITCH
    ]
    alternates.append({"hreflang": "x-default", "url": site + localized_path(path, "en")})
    pages = routed_pages(path)
    return {
        "language_switch": switch,
        "hreflang_alternates": alternates,
        "canonical_url": site + localized_path(path, language),
        "primary_pages": [p for p in pages if p["primary"]],
        "index_pages": pages,
        # Two queries a page, for a record that changes with each publication.
        "current_edition": computed("current-edition", edition_stamp),
        "indexable": settings.PUBLIC_SITE,
    }
