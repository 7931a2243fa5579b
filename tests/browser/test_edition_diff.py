"""The edition diff with a changed claim, threshold, reference and market edition, in
Chromium: axe finds nothing (the removed and added words keep AA contrast), and a screen
reader hears which words were removed and added.

Issue 18: "The markup must be accessible (ins/del with visually hidden 'added'/'removed'
text for screen readers, contrast AA)".
"""

import pytest

from markets.models import IntegrationSituation
from mica.methodology.models import ChapterItem, Edition, Reference
from mica.methodology.services import edition_publish, edition_start_draft
from tests.browser.conftest import assert_accessible
from tests.factories import LeadFactory

pytestmark = pytest.mark.browser

DIFF = "/editions/preview-0.1/diff/preview-0.2/"


@pytest.fixture
def reworded(site):
    """Preview 0.2 drafted from the published 0.1 with one word of "Scope in force"
    changed in each language (seed 000: "That is the whole of the current scope.";
    seed 001: "현재 범위는 이것이 전부입니다.")."""
    older = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=older.pk, actor=LeadFactory())
    newer = edition_start_draft(
        source=Edition.objects.get(pk=older.pk),
        slug="preview-0.2",
        label_en="Preview 0.2",
        label_ko="프리뷰 0.2",
    )
    item = ChapterItem.objects.get(edition=newer, section_id="scope-in-force")
    item.detail_en = item.detail_en.replace("whole", "entire")
    item.detail_ko = item.detail_ko.replace("전부입니다.", "전체입니다.")
    item.save()
    # And a change in every other part the diff lists: a threshold, a reference, a
    # market edition (the parts with their own lists and words marked).
    Edition.objects.filter(pk=newer.pk).update(min_eligible_runs=30)
    Reference.objects.filter(edition=newer, key="webarena").update(
        venue_en="ICLR 2024 (oral)", venue_ko="ICLR 2024 (구두 발표)"
    )
    situation = IntegrationSituation.objects.filter(
        market_edition__edition=newer, market_edition__market__code="KR"
    ).first()
    situation.title_en += " by app"
    situation.title_ko += " (앱)"
    situation.save()
    return site


@pytest.mark.parametrize(
    ("path", "heard"),
    [
        ("", ["removed: whole", "added: entire"]),
        ("/ko", ["삭제: 전부입니다.", "추가: 전체입니다."]),
    ],
)
def test_the_changed_words_are_seen_and_heard(page, reworded, path, heard):
    page.goto(f"{reworded}{path}{DIFF}")
    assert_accessible(page)
    entry = page.locator("#changed-scope-in-force")
    assert entry.locator("del").count() == entry.locator("ins").count() == 1
    tree = entry.aria_snapshot()
    assert heard
    for words in heard:
        assert words in tree, tree
    for part in ("#threshold-min_eligible_runs", "#reference-changed-webarena", "#market-KR"):
        assert page.locator(part).count() == 1, part


def test_the_edition_list_says_the_preview_is_not_published(page, site):
    """The seeded preview, labelled as a draft the site shows until an edition is
    published, in both languages; axe finds nothing."""
    for path, notice in [
        ("", "No edition has been published yet."),
        ("/ko", "아직 게시된 에디션이"),
    ]:
        page.goto(f"{site}{path}/editions/")
        assert_accessible(page)
        assert notice in page.locator("#preview-notice").inner_text()
        assert page.locator("td.standing-preview").count() == 1
