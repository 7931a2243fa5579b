"""Every figure the prose states is read from the records, in both languages, packs and pages.

Issue 18: "Every number in the prose of either language that counts records or states a
threshold, date or status is a live figure from the records, in both languages; the
English pack is still identical to the seed when the records are the canonical ones, and
a test changes each counted record kind and sees both languages follow." And: "A test
sets the four thresholds and the review cutoff and finds the new values in every place of
both packs and pages that stated them."
"""

import datetime
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from catalogue.models import TaskDefinition, TaskFamily
from markets.models import MarketEdition
from mica.content.loading import content_load
from mica.content.models import LoadedRecord
from mica.methodology.models import Edition, Reference
from mica.methodology.pack import fill_placeholders, number_words, unknown_placeholders
from tests.factories import SnapshotFactory
from tests.mica.methodology.test_korean_seed import html_text, markdown_text

SEED = Path(__file__).resolve().parents[2] / "fixtures/seeds/000_eec7d944ca90690a.txt"
LANGUAGES = ("en", "ko")


def pack(language):
    out = StringIO()
    call_command("export_methodology", "--lang", language, stdout=out)
    return out.getvalue()


def everything(client):
    """{(where, language): text} for both packs and both pages, as a reader reads them."""
    return {
        **{("pack", lang): markdown_text(pack(lang)) for lang in LANGUAGES},
        ("page", "en"): html_text(client.get("/methodology/").text),
        ("page", "ko"): html_text(client.get("/ko/methodology/").text),
    }


# ------------------------------------------------------------------ the placeholder grammar


def test_counts_in_words_agree_with_their_number():
    assert [number_words(n) for n in (0, 1, 6, 10, 11, 21, 40, 99, 100)] == [
        "zero", "one", "six", "ten", "eleven", "twenty-one", "forty", "ninety-nine", "100",
    ]  # fmt: skip
    text = "{{n|Words}} {{n|plural:market carries,markets carry}}; {{n|words}} {{n|plural:is,are}}"
    assert fill_placeholders(text, {"n": "1"}) == "One market carries; one is"
    assert fill_placeholders(text, {"n": "2"}) == "Two markets carry; two are"


def test_a_sentence_turns_on_a_state_and_nests():
    text = "{{#if a}}A{{#if b}} and B{{else}} without B{{/if}}{{else}}neither{{/if}}."
    assert fill_placeholders(text, {"a": True, "b": False}) == "A without B."
    assert fill_placeholders(text, {"a": True, "b": True}) == "A and B."
    assert fill_placeholders(text, {"a": False}) == "neither."
    # A state nobody gave stays as written, so a pack with it refuses to render.
    assert fill_placeholders(text, {}) == text


def test_editors_are_told_of_an_unknown_figure_state_filter_or_an_open_block():
    assert unknown_placeholders("{{market_count|Words}} {{#if thresholds_set}}x{{/if}}") == []
    assert unknown_placeholders("{{market_cuont}}") == ["market_cuont"]
    assert unknown_placeholders("{{market_count|shout}}") == ["market_count|shout"]
    assert unknown_placeholders("{{#if sunny}}x{{/if}}") == ["sunny"]
    assert unknown_placeholders("{{#if thresholds_set}}x") != []
    assert unknown_placeholders("x{{/if}}") != []


# ------------------------------------------------------------------ counted records


@pytest.mark.django_db
def test_the_english_pack_is_the_seed_and_reads_every_count_in_words(canonical_content):
    produced = pack("en")
    assert produced.encode("utf-8") == SEED.read_bytes()
    # The seed's words, now read from the records.
    assert "- **Market integration.** Six markets carry a declared profile." in produced
    assert "- **8.** None of the ten evaluation families carries a published result" in produced


@pytest.mark.django_db
def test_markets_are_counted_in_both_languages(client, canonical_content):
    MarketEdition.objects.filter(market__code="TH").delete()
    texts = everything(client)
    for where in ("pack", "page"):
        assert "Five markets carry a declared profile." in texts[where, "en"], where
        assert "5개 시장이 선언된 프로필을 갖고 있습니다." in texts[where, "ko"], where
        assert "across 5 country-localized real-life markets" in texts[where, "en"], where
    assert "Markets: 5 (KR, JP, SG, TW, AE)" in texts["pack", "en"]
    assert "5 markets · 10 task families · 3 independent outcome axes." in texts["page", "en"]
    for where in ("pack", "page"):
        assert "5개 시장 · 10개 과제 계열 · 3개의 독립된 결과 축." in texts[where, "ko"], where
    assert "Six markets" not in texts["pack", "en"] and "6개 시장" not in texts["pack", "ko"]


@pytest.mark.django_db
def test_a_family_added_is_counted_in_both_languages(client, canonical_content):
    family = TaskFamily.objects.order_by("position").first()
    family.pk, family.slug, family.position, family.task_prefix = None, "extra", 99, "xx"
    family.save()
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(family=family)
    texts = everything(client)
    for where in ("pack", "page"):
        assert "None of the eleven evaluation families carries" in texts[where, "en"], where
        assert "11개 평가 계열 중 어디에도" in texts[where, "ko"], where
        assert "ten evaluation families" not in texts[where, "en"], where
    assert "- Task families: 11" in pack("en")
    assert "6개 시장 · 11개 과제 계열" in texts["pack", "ko"]


@pytest.mark.django_db
def test_a_validated_task_is_counted_in_agreement(client, canonical_content):
    """Seed 000: "All 100 public definitions are provisional candidates and 0 are validated"."""
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(lifecycle="validated")
    texts = everything(client)
    for where in ("pack", "page"):
        assert (
            "Of the 100 public definitions, 99 are provisional candidates and 1 is validated."
            in texts[where, "en"]
        ), where
        assert (
            "공개된 100개 정의 중 99개는 잠정 후보이며 검증된 것은 1개입니다." in texts[where, "ko"]
        ), where
        assert "All 100 public definitions" not in texts[where, "en"]


@pytest.mark.django_db
def test_a_registered_system_and_a_reference_are_counted(client, canonical_content):
    SnapshotFactory()
    Reference.objects.filter(key="wcag-22").delete()
    texts = everything(client)
    for where in ("pack", "page"):
        assert "1 system is registered and 0 run cells exist." in texts[where, "en"], where
        assert "with 1 system and 0 run cells" in texts[where, "en"], where
        assert "등록된 시스템은 1개, 실행 셀은 0개입니다." in texts[where, "ko"], where
    assert "References in this document: 55" in texts["pack", "en"]
    assert "수록 레퍼런스 55" in texts["pack", "ko"] and "수록 레퍼런스 55" in texts["page", "ko"]


@pytest.mark.django_db
def test_the_draft_label_follows_the_edition(client, canonical_content):
    assert "방법론 초안" in everything(client)["pack", "ko"]
    Edition.objects.update(status="published", published_on=datetime.date(2026, 9, 1))
    texts = everything(client)
    assert (
        "방법론 초안" not in texts["page", "ko"] and "Methodology draft" not in texts["page", "en"]
    )


# ------------------------------------------------------------------ thresholds and cutoff

SET = {
    "min_eligible_runs": 30,
    "min_coverage": Decimal("80.00"),
    "runs_per_task": 5,
    "max_ineligible_discard_rate": Decimal("12.50"),
    "review_cutoff": datetime.date(2026, 9, 30),
}
SHOWN = {
    "en": {"runs": "30", "coverage": "80%", "per_task": "5", "discard": "12.5%"},
    "ko": {"runs": "30", "coverage": "80%", "per_task": "5", "discard": "12.5%"},
}
CUTOFF = {"en": "30 September 2026", "ko": "2026년 9월 30일"}
# Every place that stated a threshold or the cutoff, by the seed line that stated it, as
# (where the line is found {language: the line's words}, which values it must now state).
PLACES = [
    # seed 000 "- Minimum eligible runs: not set", "- Minimum coverage: not set"
    ({"en": "Minimum eligible runs: ", "ko": "최소 유효 실행 수: "}, ("runs",)),
    ({"en": "Minimum coverage: ", "ko": "최소 커버리지: "}, ("coverage",)),
    # "Review cutoff is 8 August 2026, and the claim is made to our knowledge …"
    ({"en": "Review cutoff is ", "ko": "검토 기준일은 "}, ("cutoff",)),
    # "… so the world-first claim is dated to its 8 August 2026 cutoff …"
    ({"en": "world-first claim is ", "ko": "그래서 이 주장은 "}, ("cutoff",)),
    # "Fail-closed publication. Minimum sample size and minimum coverage are unset …"
    ({"en": "Fail-closed publication. ", "ko": "실패 시 차단되는 공개. "}, ("runs", "coverage")),
    # "Planned — Publication thresholds Minimum sample size and minimum coverage are unset"
    ({"en": "Publication thresholds", "ko": "공개 기준값"}, ("runs", "coverage")),
    # contract 3.1 "Minimum eligible runs. Not set. MICA has not agreed a minimum sample size"
    ({"en": "Minimum eligible runs. ", "ko": "최소 유효 실행 수. "}, ("runs",)),
    # "Minimum coverage. Not set. Until MICA agrees what share …"
    ({"en": "Minimum coverage. ", "ko": "최소 커버리지. "}, ("coverage",)),
    # "Thresholds. Publication thresholds are not set for this edition: …"
    ({"en": "Thresholds. ", "ko": "임계값. "}, ("per_task", "runs", "coverage", "discard")),
]
# The 3.1 lead, on the pages and in the Korean pack (the English pack has no leads):
# "Two of the conditions have no agreed value yet" / "두 조건은 아직 합의된 수치가 없으므로".
LEAD = (
    {"en": "it is blocked rather than hidden. ", "ko": "차단 사유와 함께 표시됩니다. "},
    ("runs", "coverage"),
)
# (A cited page's own "accessed 8 August 2026" is that reference's date, not the cutoff.)
STALE = ("is 8 August 2026", "its 8 August 2026 cutoff", "2026년 8월 8일이고", "8월 8일 검토")
STALE += ("Two of the conditions", "두 조건은 아직")


def places_in(text, start, length=260):
    """Every passage of `text` that begins with `start`."""
    found, at = [], text.find(start)
    while at != -1:
        found.append(text[at : at + len(start) + length])
        at = text.find(start, at + 1)
    return found


def stated(language, passage, values):
    shown = {**SHOWN[language], "cutoff": CUTOFF[language]}
    return all(shown[value] in passage for value in values)


@pytest.mark.django_db
def test_the_thresholds_and_the_cutoff_reach_every_place_that_stated_them(
    client, canonical_content
):
    before = everything(client)
    Edition.objects.update(**SET)
    after = everything(client)
    assert len(after) == 4
    checked = 0
    for (where, language), text in after.items():
        # The English pack carries the Korean contract too, and it must follow as well.
        languages = ("en", "ko") if (where, language) == ("pack", "en") else (language,)
        places = PLACES + ([LEAD] if (where, language) != ("pack", "en") else [])
        assert places and languages
        for starts, values in places:
            for lang in languages:
                passages = places_in(text, starts[lang])
                if not passages and lang != language:
                    continue  # the English pack's Korean appendix holds the contract only
                assert passages, (where, language, starts[lang])
                assert places_in(before[where, language], starts[lang]), "a place before too"
                for passage in passages:
                    assert stated(lang, passage, values), (where, language, passage)
                    checked += 1
    assert checked >= 30
    # And nowhere is a threshold or the cutoff still said to be unset or the old date.
    for key, text in after.items():
        for words in STALE:
            assert words not in text, (key, words)
        assert (
            "Minimum eligible runs: not set" not in text and "최소 유효 실행 수: 미정" not in text
        )
    assert "Minimum eligible runs: not set" in before["pack", "en"]


@pytest.mark.django_db
def test_one_threshold_set_is_said_as_such(client, canonical_content):
    Edition.objects.update(min_eligible_runs=30)
    english, korean = pack("en"), pack("ko")
    assert "- **Minimum eligible runs.** 30. A cell is judged only on at least 30" in english
    assert "- **Minimum coverage.** Not set." in english
    assert "Publication thresholds are only partly set for this edition: runs per task not set" in (
        english
    )
    assert "최소 커버리지는 아직 합의된 수치가 없으므로" in korean
    assert "Minimum sample size is 30 and minimum coverage is not set" in english


# ------------------------------------------------------------------ the cutoff is a record


@pytest.mark.django_db
def test_a_database_loaded_before_the_cutoff_gets_it_and_an_edited_cutoff_is_kept(
    canonical_content,
):
    name = "methodology.edition:preview-0.1/review-cutoff"
    assert Edition.objects.get().review_cutoff == datetime.date(2026, 8, 8)
    # As loaded by a release whose file named no cutoff: the field empty, no digest.
    LoadedRecord.objects.filter(name=name).delete()
    Edition.objects.update(review_cutoff=None)
    content_load(sections=["methodology"])
    assert Edition.objects.get().review_cutoff == datetime.date(2026, 8, 8)
    # An editor's cutoff is theirs: the next load keeps it and says so.
    Edition.objects.update(review_cutoff=datetime.date(2026, 10, 1))
    reports = content_load(sections=["methodology"])
    assert Edition.objects.get().review_cutoff == datetime.date(2026, 10, 1)
    assert any(f"{name}: edited since it was loaded" in line for line in reports), reports
