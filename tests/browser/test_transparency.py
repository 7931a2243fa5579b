"""The publication log's page with every kind of entry: accessible in both languages,
reflowing at 320 px, and its JSON and key served beside it (issue 41, item 4)."""

import json

import pytest

from mica.content.models import PublicationKind
from mica.content.publication_log import publication_log_append
from mica.publication_chain import verify_chain
from tests.browser.conftest import assert_accessible, assert_reflows

pytestmark = pytest.mark.browser


@pytest.fixture
def logged(site, settings, tmp_path):
    """An entry of each kind, as the publications and a rotation write them."""
    settings.SIGNING_KEY_FILE = tmp_path / "signing_key"
    subjects = {
        PublicationKind.EXPORTS: {
            "build": "b1", "build_id": 1, "edition": "preview-0.1", "manifest_sha256": "a" * 64
        },
        PublicationKind.EDITION: {
            "slug": "preview-0.1",
            "label": {"en": "Preview 0.1", "ko": "프리뷰 0.1"},
            "published_on": "2026-12-01",
            "catalogue_sha256": "b" * 64,
        },
        PublicationKind.BAKE: {
            "build": "p1", "build_id": 2, "pages": 120, "manifest_sha256": "c" * 64
        },
    }  # fmt: skip
    for kind, subject in subjects.items():
        publication_log_append(kind=kind, subject=subject)
    return site


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_log_page_passes_axe_and_its_chain_checks(page, logged, prefix):
    page.goto(f"{logged}{prefix}/transparency/")
    assert_accessible(page)
    assert page.locator("tbody tr").count() == 3
    log = json.loads(page.request.get(f"{logged}{prefix}/transparency/log.json").body())
    key = page.request.get(f"{logged}/transparency/key").text()
    assert verify_chain(log["entries"], [key]) == log["key_id"]
    assert log["key_id"] in page.locator("main").inner_text()


def test_the_log_page_reflows_at_320_px(narrow_page, logged):
    assert_reflows(narrow_page, f"{logged}/ko/transparency/")
