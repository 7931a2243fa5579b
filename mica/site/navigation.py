"""The site's page index: primary navigation and the footer index.

Later issues add their pages here. An entry whose URL is not routed yet is left
out, so the shell never links to a page that does not exist.
"""

from dataclasses import dataclass
from functools import cache

from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class PageEntry:
    url_name: str
    label: str
    primary: bool = True


PAGES = [
    PageEntry("site:home", _("Home"), primary=False),
    PageEntry("site:evaluate", _("Plan an evaluation")),
    PageEntry("governance:results", _("Results")),
    PageEntry("catalogue:task-list", _("Tasks")),
    PageEntry("markets:market-list", _("Markets")),
    PageEntry("methodology:methodology", _("Methodology")),
    PageEntry("governance:systems", _("Systems")),
    PageEntry("governance:evidence", _("Evidence")),
    PageEntry("submissions:submit", _("Submit")),
    PageEntry("methodology:editions", _("Editions"), primary=False),
    PageEntry("submissions:challenges", _("Challenges"), primary=False),
    PageEntry("governance:governance", _("Governance"), primary=False),
    PageEntry("site:downloads", _("Downloads"), primary=False),
    PageEntry("site:transparency", _("Publication log"), primary=False),
    PageEntry("site:api-docs", _("API"), primary=False),
    PageEntry("site:search", _("Search"), primary=False),
]


@cache
def _urls(language, script_prefix, urlconf):
    """Each page's URL: sixteen reversals every page paid for, the same each time."""
    return [reverse(page.url_name) for page in PAGES]


def routed_pages(current_path):
    """Every page that exists, with its URL and whether it is the current one."""
    entries = []
    urls = _urls(get_language(), get_script_prefix(), get_urlconf())
    for page, url in zip(PAGES, urls, strict=True):
        is_home = url.rstrip("/") in ("", "/ko")
        current = current_path == url or (not is_home and current_path.startswith(url))
        entries.append(
            {
                "url_name": page.url_name,
                "url": url,
                "label": page.label,
                "primary": page.primary,
                "current": current,
            }
        )
    return entries
