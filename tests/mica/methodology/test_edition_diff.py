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


@pytest.mark.vendor
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


@pytest.mark.vendor
def test_the_other_language_reads_unchanged(client, newer):
    _reword(newer, SCOPE, detail_en=("whole", "entire"))
    entry = _entry(client.get("/ko" + DIFF).text, SCOPE)
    assert _marked(entry, "del") == _marked(entry, "ins") == []
    assert KOREAN in entry
    assert "이 언어에서 달라진 단어는 없습니다" in entry


@pytest.mark.vendor
def test_screen_readers_hear_which_words_changed(client, newer):
    _reword(newer, SCOPE, detail_en=("whole", "entire"), detail_ko=("전부입니다.", "전체입니다."))
    english = client.get(DIFF).text
    assert '<del><span class="visually-hidden">removed: </span>whole</del>' in english
    assert '<ins><span class="visually-hidden">added: </span>entire</ins>' in english
    korean = client.get("/ko" + DIFF).text
    assert '<del><span class="visually-hidden">삭제: </span>전부입니다.</del>' in korean
    assert '<ins><span class="visually-hidden">추가: </span>전체입니다.</ins>' in korean


@pytest.mark.vendor
def test_each_edition_states_its_own_figures(client, newer):
    """The newer edition declares one market fewer: the change reads 6 -> 5."""
    dropped = MarketEdition.objects.filter(edition=newer).order_by("-market__display_order")[0]
    dropped.situations.all().delete()
    dropped.delete()
    _reword(newer, SCOPE, detail_en=("whole", "entire"))
    entry = _entry(client.get(DIFF).text, SCOPE)
    assert _marked(entry, "del") == ["6", "whole"]
    assert _marked(entry, "ins") == ["5", "entire"]


@pytest.mark.vendor
def test_added_and_retracted_claims_read_with_their_figures(client, newer):
    item = ChapterItem.objects.get(edition=newer, section_id=SCOPE)
    item.section_id = "scope-now"
    item.save()
    for path, reads in [("", ENGLISH), ("/ko", KOREAN)]:
        page = client.get(path + DIFF).text
        # Headed by its term; the section id follows, as a tag.
        assert re.search(
            rf'<li id="added-scope-now"><strong>.*{re.escape(reads)} '
            r'<span class="tag" translate="no">scope-now</span></li>',
            page,
        )
        assert f'<li id="retracted-{SCOPE}">' in page
        assert "{{" not in page


@pytest.mark.vendor
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


@pytest.mark.vendor
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


# --- The whole change: thresholds, tasks, references, market editions -----------------

RETIRED = "gc-resident-record-extract"
MADE_CURRENT = "ec-reschedule-three-party"
ADDED = "ec-a-task-added-in-this-edition"


def _admin_edit(client, url, **changes):
    """Open a change form in the admin, change some fields and save, as an editor does."""
    from tests.census import form_data

    page = client.get(url)
    assert page.status_code == 200, (page.status_code, page.get("Location"))
    data = form_data(page.text)
    data.update(changes)
    saved = client.post(url, data, follow=True)
    assert saved.status_code == 200 and not saved.context.get("errors"), saved.context.get("errors")


def _task_added():
    """A new public task in the catalogue, its version in force as a content load sets it."""
    from catalogue.models import TaskDefinition, TaskVersion
    from catalogue.services import task_version_load_current

    neighbour = TaskDefinition.objects.get(slug=MADE_CURRENT)
    definition = TaskDefinition.objects.create(slug=ADDED, family=neighbour.family, position=98)
    version = TaskVersion.objects.get(pk=neighbour.current_version_id)
    # A new task's first version: a copy of its neighbour's row, not yet frozen as the
    # neighbour's is (the published edition holds that one).
    version.pk, version.definition, version.version = None, definition, "1.0.0"
    version.frozen_at = None
    version.title_en, version.title_ko = "Split a shared bill", "함께 낸 비용 나누기"
    version.save()
    task_version_load_current(version=version)


def _version_made_current(lead):
    """A second version of a task, reviewed in Korea (the only market it applies in),
    promoted and made current by the method lead."""
    from catalogue.models import MarketApplicability, TaskDefinition
    from catalogue.services import (
        task_promote,
        task_version_make_current,
        task_version_start_next,
    )
    from tests.factories import approve_locally, references_registered

    task = TaskDefinition.objects.get(slug=MADE_CURRENT)
    source = task.current_version
    # The published edition froze the source: the new version is started from it.
    newer = task_version_start_next(version_id=source.pk, actor=lead)
    assert newer.version == "1.1.0"
    MarketApplicability.objects.filter(version=newer).exclude(market__code="KR").update(
        status="not-applicable"
    )
    newer = references_registered(newer)
    approve_locally(newer.pk, "KR")
    task_promote(definition_id=task.pk, actor=lead, version_id=newer.pk)
    task_version_make_current(version_id=newer.pk, actor=lead)
    return source.title_en, source.title_ko


@pytest.fixture
def changed(client, newer, django_capture_on_commit_callbacks):
    """Preview 0.2 after a sequence of real changes since the published 0.1: thresholds set
    in the edition form, a task retired, a task added, a new version made current, a
    reference edited in the admin, and a Korean situation retitled and a local change
    dropped from the Korean market edition."""
    from catalogue.models import TaskDefinition
    from catalogue.services import task_retire
    from markets.models import IntegrationSituation, LocalChange
    from markets.services import situation_update
    from mica.methodology.models import Reference

    lead = LeadFactory()
    with django_capture_on_commit_callbacks(execute=True):
        task_retire(
            definition_id=TaskDefinition.objects.get(slug=RETIRED).pk,
            actor=lead,
            reason="Replaced by a locally authored task.",
        )
        _task_added()
        titles = _version_made_current(lead)
        # Signed in after the reviews, whose factories set the lead's password anew.
        lead.refresh_from_db()
        client.force_login(lead)
        _admin_edit(
            client,
            f"/admin/methodology/edition/{newer.pk}/change/",
            min_eligible_runs="30",
            min_coverage="80",
        )
        reference = Reference.objects.get(edition=newer, key="webarena")
        _admin_edit(
            client,
            f"/admin/methodology/reference/{reference.pk}/change/",
            venue_en="ICLR 2024 (oral)",
            venue_ko="ICLR 2024 (구두 발표)",
        )
        situation = IntegrationSituation.objects.filter(
            market_edition__edition=newer, market_edition__market__code="KR"
        ).first()
        situation_update(
            situation=situation,
            changes={
                "title_en": situation.title_en + " by app",
                "title_ko": situation.title_ko + " (앱)",
            },
            actor=lead,
        )
        dropped = LocalChange.objects.filter(
            market_edition__edition=newer, market_edition__market__code="KR"
        ).order_by("-position")[0]
        dropped.delete()
    client.logout()
    return {"titles": titles, "situation": situation, "dropped": dropped}


def _section(page, anchor):
    """The text of the page's part under the heading `anchor`, markup stripped."""
    found = re.search(rf'<h2 id="{anchor}">[^<]*</h2>(.*?)(?=<h2 |</main>)', page, re.S)
    assert found, f"no part {anchor}"
    text = re.sub(r'<span class="visually-hidden">[^<]*</span>', "", found.group(1))
    return " ".join(re.sub(r"<[^>]+>", " ", text).split())


READS = {
    "en": {
        "thresholds": [
            "Minimum eligible runs : not set 30 runs",
            "Minimum coverage (%) : not set 80%",
        ],
        "retired": "Obtain a certified resident registration extract for a rental application",
        "added": "Split a shared bill",
        "reference": "Changed: Reference · WebArena Venue and year (English): ICLR 2024 (oral)",
        "market": "South Korea",
        "situation": "Integration situation",
        "dropped": "Removed: Local change",
    },
    "ko": {
        "thresholds": ["최소 유효 실행 수 : 미정 30회", "최소 커버리지(%) : 미정 80%"],
        "retired": "임대 신청에 제출할 주민 등록 증명서 발급",
        "added": "함께 낸 비용 나누기",
        "reference": "변경: 레퍼런스 · WebArena 발표처와 연도(한국어): ICLR 2024 (구두 발표)",
        "market": "대한민국",
        "situation": "연동 상황",
        "dropped": "삭제: 현지 차이",
    },
}


@pytest.mark.vendor
@pytest.mark.parametrize("language", ["en", "ko"])
def test_the_diff_names_every_change_by_its_title(client, changed, language):
    """Seed L175: "A change ships as a new edition of this wiki and of the generated
    Markdown pack, both of which state the current rule in full so a reader never has to
    reconstruct it" -- and the diff between two editions names each change, by its title
    in the reader's language: thresholds, tasks added, made current and retired,
    references and market editions."""
    reads = READS[language]
    page = client.get(("/ko" if language == "ko" else "") + DIFF).text
    thresholds = _section(page, "thresholds")
    assert reads["thresholds"]
    for line in reads["thresholds"]:
        assert line in thresholds, thresholds
    assert "Runs per task" not in thresholds and "과제당 실행 수" not in thresholds
    assert _section(page, "tasks-retired").startswith(reads["retired"])  # the title first
    assert reads["added"] in _section(page, "tasks-added")
    made_current = _section(page, "tasks-made-current")
    assert changed["titles"][0 if language == "en" else 1] in made_current
    assert "1.0.0 1.1.0" in made_current
    assert reads["reference"] in _section(page, "references")
    markets = _section(page, "market-editions")
    situation = changed["situation"]
    assert markets.startswith(reads["market"])
    assert reads["situation"] in markets
    title = getattr(situation, f"title_{language}")
    assert title in markets and ("by app" if language == "en" else "(앱)") in markets
    assert reads["dropped"] in markets
    assert "Japan" not in markets and "일본" not in markets  # untouched markets stay out
    contents = re.search(r'<nav aria-labelledby="diff-contents">(.*?)</nav>', page, re.S)
    assert "(2)" in contents.group(1)  # two thresholds


@pytest.mark.vendor
def test_the_json_names_every_change_with_both_titles(client, changed):
    """The same difference as JSON: every change carries its title in both languages."""
    body = client.get("/api/v1/editions/preview-0.1/diff/preview-0.2/").json()
    assert [(t["name"], t["before"], t["after"], t["unit"]) for t in body["thresholds"]] == [
        ("min_eligible_runs", None, 30, "runs"),
        ("min_coverage", None, 80, "percent"),
    ]
    assert body["thresholds"][0]["title"] == {
        "en": "Minimum eligible runs",
        "ko": "최소 유효 실행 수",
    }
    assert [t["slug"] for t in body["tasks_retired"]] == [RETIRED]
    assert body["tasks_retired"][0]["title"] == {
        "en": READS["en"]["retired"],
        "ko": READS["ko"]["retired"],
    }
    assert [(t["slug"], t["title"]["ko"]) for t in body["tasks_added"]] == [
        (ADDED, "함께 낸 비용 나누기")
    ]
    [current] = body["tasks_made_current"]
    assert (current["slug"], current["version_before"], current["version_after"]) == (
        MADE_CURRENT,
        "1.0.0",
        "1.1.0",
    )
    assert set(current["title"]) == {"en", "ko"}
    [reference] = body["references"]["changed"]
    assert (reference["key"], reference["title"]) == (
        "webarena",
        {"en": "WebArena", "ko": "WebArena"},
    )
    assert [f["name"] for f in reference["fields"]] == ["venue_en", "venue_ko"]
    assert reference["fields"][0]["label"] == {
        "en": "Venue and year (English)",
        "ko": "발표처와 연도(영어)",
    }
    [korea] = body["market_editions"]
    assert (korea["key"], korea["title"], korea["state"]) == (
        "KR",
        {"en": "South Korea", "ko": "대한민국"},
        "changed",
    )
    situation = changed["situation"]
    [retitled] = korea["changed"]
    assert retitled["key"] == f"situation:{situation.situation_id}"
    assert retitled["title"]["ko"].endswith("(앱)") and retitled["title"]["en"].endswith("by app")
    [dropped] = korea["removed"]
    assert dropped["key"] == f"local-change:{changed['dropped'].position}"
    assert body["editions"]["from"]["standing"] == "published"
    assert body["editions"]["to"]["standing"] == "draft"
