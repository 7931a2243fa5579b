import re

from django import template
from django.urls import Resolver404, resolve, reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.views.generic import RedirectView

from mica.site.i18n import localized_path

register = template.Library()

HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
LATIN = re.compile(r"[A-Za-z]")


@register.filter
def get_item(mapping, key):
    """mapping[key] in a template, or None."""
    return mapping.get(key) if mapping else None


@register.filter(is_safe=True)
def full_stop(text):
    """A term as a run-in heading, closed by one full stop: a term that already ends in
    one ("No successful task.") gets no second."""
    return text if str(text).rstrip().endswith((".", "?", "!")) else f"{text}."


@register.filter
def site_path(path):
    """A path the method's text names (`/submit`, `/about/governance`) as a link for this
    reader: in the reader's language, with its trailing slash, and straight to the page
    a redirect of the site would lead to. Anything but a site path is left as it is."""
    if not path or not path.startswith("/") or path.startswith("//"):
        return path
    localized = localized_path(path, translation.get_language() or "en")
    for candidate in (localized, localized.rstrip("/") + "/"):
        try:
            match = resolve(candidate)
        except Resolver404:
            continue
        if getattr(match.func, "view_class", None) is RedirectView:
            # The method's own name for a page that lives elsewhere: link the page.
            pattern_name = match.func.view_initkwargs.get("pattern_name")
            return reverse(pattern_name) if pattern_name else candidate
        return candidate
    return localized


@register.simple_tag
def lang_of_script(text):
    """` lang="…"` for text wholly in the other language's script: on a Korean page, the
    cited works' own titles, which seed 001 keeps in English; on an English page, a
    Korean title. Nothing where the text is in the page's own language."""
    language = translation.get_language()
    if not text:
        return ""
    if language == "ko" and LATIN.search(text) and not HANGUL.search(text):
        return mark_safe(' lang="en"')
    if language != "ko" and HANGUL.search(text) and not LATIN.search(text):
        return mark_safe(' lang="ko"')
    return ""
