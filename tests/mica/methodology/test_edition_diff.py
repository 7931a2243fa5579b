"""The edition diff as a reader reads it: word by word, in the page's language, with the
figures each edition states in place of its placeholders."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from markets.models import MarketEdition
from mica.methodology.models import ChapterItem, Edition
from mica.methodology.services import edition_publish, edition_start_draft
from tests.factories import LeadFactory

pytestmark = pytest.mark.django_db

SCOPE = "scope-in-force"
DIFF = "/editions/preview-0.1/diff/preview-0.2/"
# Seed 000: "- **[Current rule] Scope in force.** 6 markets, 10 task families and 100
# canonical task definitions. That is the whole of the current scope."
ENGLISH = (
    "6 markets, 10 task families and 100 canonical task definitions. "
    "That is the whole of the current scope."
)
# Seed 001: "6개 시장, 10개 과제 계열, 100개 표준 과제 정의입니다. 현재 범위는 이것이 전부입니다."
KOREAN = "6개 시장, 10개 과제 계열, 100개 표준 과제 정의입니다. 현재 범위는 이것이 전부입니다."


@pytest.fixture
def newer(canonical_content):
    """Preview 0.1 published, and preview 0.2 drafted from it with nothing changed yet."""
    lead = LeadFactory()
    older = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=older.pk, actor=lead)
    return edition_start_draft(
        source=Edition.objects.get(pk=older.pk),
        slug="preview-0.2",
        label_en="Preview 0.2",
        label_ko="프리뷰 0.2",
    )


def _reword(edition, section_id, **replacements):
    """Replace words in a claim's stored text: field=(old, new)."""
    item = ChapterItem.objects.get(edition=edition, section_id=section_id)
    for field, (old, new) in replacements.items():
        text = getattr(item, field)
        assert old in text, f"{section_id}.{field} no longer reads {old!r}"
        setattr(item, field, text.replace(old, new))
    item.save()


def _entry(page, section_id):
    """The list entry of a changed claim, without the words only screen readers hear."""
    found = re.search(rf'<li id="changed-{section_id}">(.*?)</li>', page, re.S)
    assert found, f"{section_id} is not listed as changed"
    return re.sub(r'<span class="visually-hidden">[^<]*</span>', "", found.group(1))


def _marked(entry, tag):
    return re.findall(rf"<{tag}>(.*?)</{tag}>", entry)


def _unmarked(entry):
    """The entry's text with every removed run dropped and the markup stripped."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<del>.*?</del>", "", entry))


@pytest.mark.parametrize(
    ("path", "field", "old", "new", "reads"),
    [
        ("", "detail_en", "whole", "entire", ENGLISH),
        ("/ko", "detail_ko", "전부입니다.", "전체입니다.", KOREAN),
    ],
)
def test_a_one_word_change_shows_that_word_only(client, newer, path, field, old, new, reads):
    assert reads in client.get(f"{path}/methodology/").text  # the figures the page prints
    _reword(newer, SCOPE, **{field: (old, new)})
    page = client.get(path + DIFF).text
    entry = _entry(page, SCOPE)
    assert _marked(entry, "del") == [old]
    assert _marked(entry, "ins") == [new]
    assert reads.replace(old, new) in " ".join(_unmarked(entry).split())
    assert "{{" not in page


def test_the_other_language_reads_unchanged(client, newer):
    _reword(newer, SCOPE, detail_en=("whole", "entire"))
    entry = _entry(client.get("/ko" + DIFF).text, SCOPE)
    assert _marked(entry, "del") == _marked(entry, "ins") == []
    assert KOREAN in entry
    assert "이 언어에서 달라진 단어는 없습니다" in entry


def test_screen_readers_hear_which_words_changed(client, newer):
    _reword(newer, SCOPE, detail_en=("whole", "entire"), detail_ko=("전부입니다.", "전체입니다."))
    english = client.get(DIFF).text
    assert '<del><span class="visually-hidden">removed: </span>whole</del>' in english
    assert '<ins><span class="visually-hidden">added: </span>entire</ins>' in english
    korean = client.get("/ko" + DIFF).text
    assert '<del><span class="visually-hidden">삭제: </span>전부입니다.</del>' in korean
    assert '<ins><span class="visually-hidden">추가: </span>전체입니다.</ins>' in korean


def test_each_edition_states_its_own_figures(client, newer):
    """The newer edition declares one market fewer: the change reads 6 -> 5."""
    dropped = MarketEdition.objects.filter(edition=newer).order_by("-market__display_order")[0]
    dropped.situations.all().delete()
    dropped.delete()
    _reword(newer, SCOPE, detail_en=("whole", "entire"))
    entry = _entry(client.get(DIFF).text, SCOPE)
    assert _marked(entry, "del") == ["6", "whole"]
    assert _marked(entry, "ins") == ["5", "entire"]


def test_added_and_retracted_claims_read_with_their_figures(client, newer):
    item = ChapterItem.objects.get(edition=newer, section_id=SCOPE)
    item.section_id = "scope-now"
    item.save()
    for path, reads in [("", ENGLISH), ("/ko", KOREAN)]:
        page = client.get(path + DIFF).text
        assert re.search(rf'<li id="added-scope-now">.*{re.escape(reads)}</li>', page)
        assert f'<li id="retracted-{SCOPE}">' in page
        assert "{{" not in page


def test_stored_markup_prints_escaped(client, newer):
    attack = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    item = ChapterItem.objects.get(edition=newer, section_id=SCOPE)
    item.term_en = item.term_en + attack
    item.detail_en = attack + item.detail_en
    item.save()
    ChapterItem.objects.create(
        edition=newer,
        chapter=item.chapter,
        section_id="an-attack",
        term_en=attack,
        term_ko=attack,
        detail_en=attack,
        detail_ko=attack,
    )
    page = client.get(DIFF).text
    assert "<script>alert" not in page and "<img src=x" not in page
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") >= 4


def test_the_diff_page_reads_the_same_number_of_queries_at_any_size(
    client, newer, settings, django_assert_num_queries
):
    settings.PAGE_CACHE_SECONDS = 0  # count the page's own reads, not the cache's
    _reword(newer, SCOPE, detail_en=("whole", "entire"))
    client.get(DIFF)  # per-process lookups (content types, translations) warm up first
    with CaptureQueriesContext(connection) as small:
        client.get(DIFF)
    assert small.captured_queries
    claims = list(ChapterItem.objects.filter(edition=newer).exclude(section_id=SCOPE))
    assert len(claims) > 20
    for item in claims:
        item.detail_en = item.detail_en + " Narrowed."
        item.detail_ko = item.detail_ko + " 좁혔습니다."
    ChapterItem.objects.bulk_update(claims, ["detail_en", "detail_ko"])
    ChapterItem.objects.filter(edition=newer, section_id=claims[0].section_id).delete()
    for path in ["", "/ko"]:
        with django_assert_num_queries(len(small.captured_queries)):
            page = client.get(path + DIFF).text
        assert page.count('<li id="changed-') == len(claims)
