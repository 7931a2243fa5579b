"""Site search: both languages, grouped by kind, marked, escaped, constant queries, no holdout."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue.models import TaskDefinition, TaskSet, TaskVersion
from catalogue.services import task_version_make_current
from mica.methodology.facts import live_facts
from mica.methodology.models import ChapterItem
from mica.methodology.selectors import edition_current
from mica.site.search import KINDS, MAX_QUERY_CHARS, search
from tests.support import require

pytestmark = pytest.mark.django_db

CANARY = "CANARY-5c1d0e77-search-holdout"


def hits(results, kind):
    """The hit URLs of one kind."""
    return [hit.url for group in results.groups if group.kind == kind for hit in group.hits]


def marked(parts):
    return [part.text for part in parts if part.match]


@pytest.fixture
def holdout(canonical_content):
    """A holdout task whose every text carries the canary."""
    public = TaskDefinition.objects.get(slug="ec-reschedule-three-party")
    definition = TaskDefinition.objects.create(
        slug="ec-search-holdout-canary",
        family=public.family,
        position=98,
        task_set=TaskSet.HOLDOUT,
    )
    version = TaskVersion.objects.create(
        definition=definition,
        version="1.0.0",
        title_en=f"Holdout {CANARY}",
        title_ko=f"홀드아웃 {CANARY}",
        final_state_en=CANARY,
        final_state_ko=CANARY,
        confirmation_boundary_en=CANARY,
        confirmation_boundary_ko=CANARY,
        surface="web",
        termination_class="refusal",
        declared_complexity="single-step",
        parameter_schema=public.current_version.parameter_schema,
    )
    task_version_make_current(version=version)
    return definition


@pytest.mark.parametrize(
    "language, query, kind, url",
    [
        ("en", "locality hard part", "claims", "/methodology/claims/locality-is-the-hard-part/"),
        ("ko", "현지성이다", "claims", "/ko/methodology/claims/locality-is-the-hard-part/"),
        ("en", "construct evaluation unit", "chapters", "/methodology/claims/construct/"),
        ("ko", "구성 개념", "chapters", "/ko/methodology/claims/construct/"),
        ("en", "system snapshot", "glossary", "/methodology/claims/system-snapshot/"),
        ("ko", "시스템 스냅샷", "glossary", "/ko/methodology/claims/system-snapshot/"),
        ("en", "reschedule three-person", "tasks", "/tasks/ec-reschedule-three-party/"),
        ("ko", "세 사람 회의", "tasks", "/ko/tasks/ec-reschedule-three-party/"),
        ("en", "South Korea", "markets", "/markets/kr/"),
        ("ko", "대한민국", "markets", "/ko/markets/kr/"),
    ],
)
def test_known_words_find_their_record_in_the_readers_language(
    canonical_content, language, query, kind, url
):
    assert url in hits(search(query, language), kind)


def test_each_language_searches_only_its_own_columns(canonical_content):
    assert not search("현지성이다", "en").total
    assert not search("Locality is the hard part", "ko").total


def test_results_are_grouped_in_the_order_of_kinds(canonical_content):
    results = search("evidence", "en")
    assert [group.kind for group in results.groups] == [kind.key for kind in KINDS]
    found = {group.kind for group in results.found}
    assert {"claims", "chapters", "glossary", "tasks"} <= found
    claims = next(group for group in results.groups if group.kind == "claims")
    assert claims.hits
    assert all(hit.url.startswith("/methodology/claims/") for hit in claims.hits)


def test_every_word_must_match(canonical_content):
    both = set(hits(search("locality hard", "en"), "claims"))
    locality = set(hits(search("locality", "en"), "claims"))
    assert both and both < locality


def test_the_matching_text_is_marked_in_title_and_excerpt(canonical_content):
    results = search("hard locality translation", "en")
    hit = next(g for g in results.groups if g.kind == "claims").hits[0]
    assert [text.casefold() for text in marked(hit.title)] == ["locality", "hard"]
    assert "".join(part.text for part in hit.title) == "Locality is the hard part"
    assert {text.casefold() for text in marked(hit.excerpt)} == {"translation"}


def test_a_long_text_is_cut_to_a_short_excerpt_around_the_hit(canonical_content):
    results = search("superiority", "en")
    hit = next(g for g in results.groups if g.kind == "claims").hits[0]
    text = "".join(part.text for part in hit.excerpt)
    assert marked(hit.excerpt) == ["superiority"]
    assert text.startswith("… ") and len(text) < 250


def test_live_figures_are_filled_into_excerpts(canonical_content):
    results = search("country-localized real-life", "en")
    hit = next(g for g in results.groups if g.kind == "claims").hits[0]
    text = "".join(part.text for part in hit.excerpt)
    market_count = live_facts(edition_current())["en"]["market_count"]
    assert "{{" not in text and f"across {market_count} country-localized" in text


def test_the_page_shows_groups_marks_and_links_in_english(client, canonical_content):
    response = client.get("/search/", {"q": "localization"})
    assert response.status_code == 200
    body = response.text
    assert 'role="search"' in body and '<label for="search-q">' in body
    assert 'id="results-claims"' in body and 'id="results-chapters"' in body
    assert 'id="results-glossary"' in body and 'id="results-markets"' not in body
    assert 'href="/methodology/claims/task-authoring/"' in body
    assert "Task authoring and market <mark>localization</mark>" in body
    assert '<meta name="robots" content="noindex, nofollow">' in body


def test_placeholders_a_reader_never_sees_are_not_found(canonical_content):
    # Korean texts hold "{{market_count}}"; the Korean reader sees a number there.
    assert "/ko/methodology/claims/world-first-claim/" in hits(search("시장", "ko"), "claims")
    assert not search("market_count", "ko").total


def test_the_page_works_in_korean(client, canonical_content):
    response = client.get("/ko/search/", {"q": "현지성"})
    body = response.text
    assert response.status_code == 200 and '<html lang="ko">' in body
    assert "어려운 부분은 <mark>현지성</mark>이다" in body
    assert 'href="/ko/methodology/claims/locality-is-the-hard-part/"' in body
    assert "주장과 항목" in body


def test_market_hits_name_the_market_natively(client, canonical_content):
    body = client.get("/search/", {"q": "Japan"}).text
    assert 'href="/markets/jp/"' in body and '<span class="native" lang="ja">' in body


@pytest.mark.parametrize("path", ["/search/", "/ko/search/"])
def test_an_empty_query_shows_a_prompt(client, canonical_content, path):
    response = client.get(path)
    assert response.status_code == 200
    assert not search("", "en").groups
    prompt = "Type a word or two above" if path == "/search/" else "위 칸에 낱말을"
    assert prompt in response.text


@pytest.mark.parametrize(
    "query",
    [
        "<script>alert(1)</script>",
        '"><mark>x</mark>',
        "%_\\'\"&|!():*<->",
        "\x00\x01\u200b",
        "🦊 ‽ ​",
        "a" * 5000,
        "locality " * 200,
        "' OR 1=1 --",
    ],
)
def test_odd_input_never_fails_and_is_escaped(client, canonical_content, query):
    for path in ("/search/", "/ko/search/"):
        response = client.get(path, {"q": query})
        # A NUL is refused before any view (mica.site.middleware.NulInputMiddleware).
        assert response.status_code == (400 if "\x00" in query else 200)
        body = response.text
        assert "<script>alert" not in body and '"><mark>x' not in body


def test_user_text_is_escaped_inside_marked_excerpts(canonical_content):
    item = ChapterItem.objects.filter(edition=edition_current()).first()
    item.term_en = 'Tom & <b>"zebra"</b> < 3'
    item.save()
    from django.test import Client

    body = Client().get("/search/", {"q": "zebra"}).text
    assert "Tom &amp; &quot;<mark>zebra</mark>&quot; &lt; 3" in body


def test_a_long_query_is_capped_with_a_message(client, canonical_content):
    results = search("locality " * 100, "en")
    assert results.shortened and len(results.query) <= MAX_QUERY_CHARS
    body = client.get("/search/", {"q": "x" * 500}).text
    assert f"only the first {MAX_QUERY_CHARS} were used" in body


def test_repeated_parameters_use_the_last(client, canonical_content):
    response = client.get("/search/?q=zzzq&q=locality")
    assert response.status_code == 200
    assert 'href="/methodology/claims/locality-is-the-hard-part/"' in response.text


def test_a_query_of_punctuation_only_says_so(client, canonical_content):
    body = client.get("/search/", {"q": "?!"}).text
    assert "holds no word to search for" in body


def test_no_match_offers_somewhere_to_browse(client, canonical_content):
    body = client.get("/ko/search/", {"q": "zzqxv"}).text
    assert "검색 결과가 없습니다" in body and 'href="/ko/tasks/"' in body


def test_queries_are_one_per_kind_whatever_the_number_of_hits(
    canonical_content, django_assert_num_queries
):
    edition = edition_current()
    with CaptureQueriesContext(connection) as facts:
        live_facts(edition)
    # No hit quotes a live figure: one query per kind and nothing else.
    with django_assert_num_queries(len(KINDS)):
        assert not search("zzqxv", "en", edition).total
    # A live figure in an excerpt reads the facts once, however many hits quote one.
    with django_assert_num_queries(len(KINDS) + len(facts)):
        narrow = search("country-localized conjunction", "en", edition)
    with django_assert_num_queries(len(KINDS) + len(facts)):
        broad = search("the", "en", edition)
    assert 0 < narrow.total < broad.total


def test_the_page_runs_the_same_queries_for_few_and_many_hits(client, canonical_content):
    def count(query):
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/search/", {"q": query}).status_code == 200
        return len(queries)

    assert count("market conjunction") == count("the")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_a_holdout_canary_is_never_found(client, holdout, language):
    for query in (CANARY, holdout.slug, "holdout canary"):
        assert not hits(search(query, language), "tasks")
    prefix = "/ko" if language == "ko" else ""
    body = client.get(f"{prefix}/search/", {"q": CANARY}).text
    assert holdout.slug not in body and "홀드아웃 CANARY" not in body
    # The same record, once public, is found: the search is what keeps it out.
    TaskDefinition.objects.filter(pk=holdout.pk).update(task_set=TaskSet.PUBLIC)
    assert f"{prefix}/tasks/{holdout.slug}/" in hits(search(CANARY, language), "tasks")


def test_search_is_in_the_footer_index(client, canonical_content):
    assert 'href="/ko/search/"' in client.get("/ko/").text


@pytest.mark.postgres
def test_postgres_full_text_matches_word_prefixes_in_both_languages(canonical_content, holdout):
    require(connection.vendor == "postgresql", "full-text search runs on PostgreSQL")
    assert "/methodology/claims/locality-is-the-hard-part/" in hits(
        search("localit hard", "en"), "claims"
    )
    # "현지성" is a prefix of the word "현지성이다": particles do not hide a word.
    found = hits(search("현지성", "ko"), "claims")
    assert "/ko/methodology/claims/locality-is-the-hard-part/" in found
    for language in ("en", "ko"):
        assert not hits(search(CANARY, language), "tasks")
