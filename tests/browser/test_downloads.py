"""The downloads page with a published export set: accessible, and every link downloads.

Publishing moves the exports' pointer in the database: each test has a site of its own."""

import hashlib

import pytest

from mica.exports.publish import exports_build_and_publish
from tests.browser.conftest import assert_accessible, assert_reflows

pytestmark = pytest.mark.browser


@pytest.fixture
def published_set(site, settings, tmp_path):
    settings.EXPORT_DIR = tmp_path / "exports"
    return exports_build_and_publish()


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_downloads_page_passes_axe_and_its_checksums_hold(page, site, published_set, prefix):
    page.goto(f"{site}{prefix}/downloads/")
    assert_accessible(page)
    rows = page.locator("tbody tr")
    assert rows.count() == len(published_set["files"])
    entry = published_set["files"][2]
    body = page.request.get(f"{site}/downloads/{entry['name']}").body()
    assert hashlib.sha256(body).hexdigest() == entry["sha256"]
    assert entry["sha256"] in page.locator("tbody").inner_text()


def test_the_downloads_page_reflows_at_320_px(narrow_page, site, published_set):
    assert_reflows(narrow_page, f"{site}/ko/downloads/")
