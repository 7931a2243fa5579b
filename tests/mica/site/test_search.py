"""Site search: both languages, grouped by kind, marked, escaped, constant queries, no holdout."""

from itertools import pairwise

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue.models import TaskDefinition, TaskSet, TaskVersion
from catalogue.services import task_version_load_current
from markets.models import PlatformRegistration, RegistrationStatus
from mica.methodology.facts import live_facts
from mica.methodology.models import ChapterItem
from mica.methodology.selectors import edition_current
from mica.site.search import KINDS, MAX_QUERY_CHARS, english_stem, search, written_in
from tests.support import require

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

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
    task_version_load_current(version=version)
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

    count("edition")  # the first page fills the shell's fragments
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


# --- A reference work: stemming, partial Korean words, market pages, honest hints ---


@pytest.mark.parametrize("query", ["refunds", "refunded", "refunding", "the refunds"])
def test_english_words_are_found_in_their_other_forms(canonical_content, query):
    results = search(query, "en")
    # Seed 000: "**Law and consumer terms.** Taxes, mandatory fees, cancellation,
    # refund, disclosure and consumer-protection conditions are evaluated ..."
    contract = "/methodology/claims/locality-policy-law-and-consumer-terms/"
    assert contract in hits(results, "contract")
    assert "/tasks/rl-wrong-item-refund-claim/" in hits(results, "tasks")
    # "refundable" is marked whole: the mark runs from the stem to the word's end.
    task = next(g for g in results.groups if g.kind == "tasks")
    hotel = next(h for h in task.hits if h.url == "/tasks/ta-hotel-price-drop-rebook/")
    assert "refundable" in [text.casefold() for text in marked(hotel.title)]


@pytest.mark.parametrize(
    "word, stem",
    [
        ("refunds", "refund"),
        ("refunded", "refund"),
        ("policies", "polic"),
        ("changes", "chang"),
        ("booking", "book"),
        ("planned", "plan"),
        ("status", "status"),
        ("class", "class"),
        ("bring", "bring"),
        ("the", "the"),
        ("환불을", "환불을"),
    ],
)
def test_the_english_stem_is_a_prefix_the_forms_share(word, stem):
    assert english_stem(word) == stem


def test_an_english_word_is_found_only_where_a_word_begins(canonical_content):
    # "the" is inside "synthetic" (the income-tax task); it must not mark it there.
    results = search("the persona", "en")
    task = next(g for g in results.groups if g.kind == "tasks")
    tax = next(h for h in task.hits if h.url == "/tasks/gc-income-tax-return-approval/")
    assert "synthetic persona" in "".join(part.text for part in tax.excerpt)
    marks = [(before, part) for before, part in pairwise(tax.excerpt) if part.match]
    assert marks
    for before, part in marks:
        assert part.text.casefold().startswith(("the", "persona"))
        assert not before.text[-1].isalpha()


def test_a_korean_word_is_found_without_its_particle(canonical_content):
    results = search("환불", "ko")
    # Seed 001: "세금, 의무 수수료, 취소, 환불, 고지, 소비자보호 조건은 해당 시장의
    # 적용 규칙으로 평가합니다."
    assert "/ko/methodology/claims/locality-policy-law-and-consumer-terms/" in hits(
        results, "contract"
    )
    # The title reads "… 환불까지 확인": the word is found and marked inside "환불까지".
    task = next(g for g in results.groups if g.kind == "tasks")
    damaged = next(h for h in task.hits if h.url == "/ko/tasks/sd-damaged-item-return/")
    assert marked(damaged.title) == ["환불"]
    assert "환불까지" in "".join(part.text for part in damaged.title)


@pytest.mark.parametrize(
    "language, query, url",
    [
        # markets/content/kr.yaml, hazard: "... steps often live inside Kakao or Naver app flows"
        ("en", "Kakao", "/markets/kr/#hazards"),
        ("ko", "카카오", "/ko/markets/kr/#hazards"),
        # kr.yaml, SRT's local reach: "서울 강남권 수서역에서 출발하는 고속철도 서비스입니다."
        ("ko", "서울", "/ko/markets/kr/#platforms"),
        ("ko", "수서", "/ko/markets/kr/#platforms"),
        ("en", "Seoul Suseo", "/markets/kr/#platforms"),
    ],
)
def test_market_page_text_is_found_and_links_to_its_section(
    client, canonical_content, language, query, url
):
    assert hits(search(query, language), "markets") == [url]
    page = client.get(url.split("#")[0]).text
    assert f'id="{url.split("#")[1]}"' in page and query.split()[-1] in page


def test_market_search_finds_what_the_page_shows_and_nothing_else(client, canonical_content):
    assert hits(search("Suseo", "en"), "markets") == ["/markets/kr/#platforms"]
    # The page leaves a superseded registration out; so does the search.
    srt = PlatformRegistration.objects.filter(
        market_edition__market__code="KR", platforms__name_en="SRT"
    )
    assert srt.update(status=RegistrationStatus.SUPERSEDED) == 1
    assert "Suseo" not in client.get("/markets/kr/").text
    assert not hits(search("Suseo", "en"), "markets")


@pytest.mark.parametrize(("language", "query"), [("en", "Kakao"), ("ko", "서울")])
def test_market_page_text_costs_no_extra_query(
    canonical_content, django_assert_num_queries, language, query
):
    edition = edition_current()
    with django_assert_num_queries(len(KINDS)):
        assert hits(search(query, language, edition), "markets")


def test_the_words_script_names_their_language():
    assert written_in(["환불"]) == "ko" and written_in(["refund", "환불"]) == "ko"
    assert written_in(["refund", "2026"]) == "en"
    assert written_in(["2026"]) == "" and written_in(["日本"]) == ""


def test_a_korean_query_on_the_english_page_is_sent_to_the_korean_version(
    client, canonical_content
):
    results = search("환불", "en")
    assert not results.total and results.elsewhere.language == "ko"
    body = client.get("/search/", {"q": "환불"}).text
    assert "Your words are in Korean" in body
    assert '<a href="/ko/search/?q=%ED%99%98%EB%B6%88" hreflang="ko">' in body
    assert "Try fewer" not in body
    # Followed, the link finds the Korean records.
    assert hits(search("환불", "ko"), "tasks")


def test_an_english_query_on_the_korean_page_is_sent_to_the_english_version(
    client, canonical_content
):
    body = client.get("/ko/search/", {"q": "refundable"}).text
    assert "“refundable” 검색 결과가 없습니다." in body
    assert '<a href="/search/?q=refundable" hreflang="en">영어판에서 찾아보세요</a>' in body
    assert "낱말 수를 줄여" not in body
    assert hits(search("refundable", "en"), "tasks")


@pytest.mark.parametrize(
    "path, query, hint",
    [
        ("/search/", "refund zzqxv", "contains every word you typed. Try fewer words."),
        ("/search/", "zzqxv", "No record contains this word in any of its usual forms."),
        ("/ko/search/", "환불 뷁뷁", "입력한 낱말이 모두 들어 있는 기록만 보여 드립니다."),
        ("/ko/search/", "뷁뷁", "더 긴 낱말 속까지 찾아보았지만 이 낱말이 든 기록이 없습니다."),
    ],
)
def test_no_match_in_the_pages_own_language_gets_that_languages_hint(
    client, canonical_content, path, query, hint
):
    body = client.get(path, {"q": query}).text
    assert hint in body and "hreflang=" not in body.split('role="status"', 1)[1]


@pytest.mark.parametrize(
    "path, help_text",
    [
        ("/search/", "in any of its usual forms"),
        ("/ko/search/", "조사나 어미는 붙이지 않아도 됩니다"),
    ],
)
def test_the_help_says_how_this_languages_search_matches(client, path, help_text):
    assert help_text in client.get(path).text


@pytest.mark.postgres
def test_postgres_ranks_a_whole_korean_word_before_one_inside_a_longer_word(canonical_content):
    require(connection.vendor == "postgresql", "trigram ranking runs on PostgreSQL")
    with connection.cursor() as cursor:
        cursor.execute("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")
        assert cursor.fetchone() == ("pg_trgm",)
    first, second = ChapterItem.objects.filter(edition=edition_current()).order_by(
        "chapter__position", "position", "pk"
    )[:2]
    first.term_ko, second.term_ko = "쀏쀏을 다루는 항목", "쀏쀏 항목"
    first.save()
    second.save()
    found = hits(search("쀏쀏", "ko"), "claims")
    # The search order, not the page order: the whole word "쀏쀏" first.
    assert found == [
        f"/ko/methodology/claims/{second.section_id}/",
        f"/ko/methodology/claims/{first.section_id}/",
    ]
