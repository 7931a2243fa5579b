"""axe-core finds no WCAG 2.2 A/AA violation on any page, in either language."""

import re
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import assert_accessible, assert_reflows
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


# Pages that no sitemap lists but a reader still meets.
UNLISTED_PAGES = [
    "/no-such-page/",
    "/ko/no-such-page/",
    "/methodology/claims/why-mica/",
    "/ko/methodology/claims/world-first-claim/",
    "/editions/preview-0.1/",
    "/editions/preview-0.1/diff/preview-0.1/",
    "/ko/editions/preview-0.1/diff/preview-0.1/",
]


def page_type(path):
    """Pages of one kind share a type: /tasks/a/ and /tasks/b/ are both /tasks/*/."""
    parts = path.strip("/").split("/")
    language = "ko" if parts[0] == "ko" else "en"
    parts = parts[1:] if language == "ko" else parts
    return language, tuple(parts[:1]), len(parts)


def public_pages(page, site, per_type=2):
    """Every page type of the sitemap in both languages (two of each), plus the error pages."""
    page.goto(f"{site}/sitemap.xml")
    locations = re.findall(r"<loc>([^<]+)</loc>", page.content())
    paths = [urlsplit(location).path for location in locations]
    assert "/" in paths and "/ko/" in paths
    chosen, counts = [], {}
    for path in paths:
        kind = page_type(path)
        if counts.get(kind, 0) < per_type:
            counts[kind] = counts.get(kind, 0) + 1
            chosen.append(path)
    return chosen + UNLISTED_PAGES


def test_every_public_page_passes_axe(page, site):
    for path in public_pages(page, site):
        page.goto(f"{site}{path}")
        assert_accessible(page)


def test_pages_reflow_at_320_px_without_horizontal_scrolling(narrow_page, site):
    for path in public_pages(narrow_page, site):
        assert_reflows(narrow_page, f"{site}{path}")
