"""Parts of pages from the fragment cache: the same bytes as a page made without them,
an edit seen at once in both languages, and only the edited record made afresh."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalogue import presenters
from catalogue.models import ContractClause, Lifecycle, TaskDefinition, TaskVersion
from markets.models import Market
from mica.methodology.models import ChapterItem

pytestmark = pytest.mark.django_db

KEPT_PAGES = [
    "/tasks/",
    "/ko/tasks/",
    "/tasks/ec-reschedule-three-party/",
    "/methodology/",
    "/ko/methodology/",
    "/markets/",
    "/ko/markets/kr/",
    "/evaluate/",
    "/",
    "/ko/results/",
]


@pytest.fixture
def renders(settings, fragments):
    """Every request renders its page: the page cache is off, the fragment cache on."""
    settings.PAGE_CACHE_SECONDS = 0


def _rendered(client, path):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200, path
    return response.content, len(queries.captured_queries)


@pytest.mark.parametrize("path", KEPT_PAGES)
def test_a_page_made_of_kept_fragments_is_byte_identical_and_cheaper(
    client, canonical_content, renders, path
):
    cold, cold_queries = _rendered(client, path)
    warm, warm_queries = _rendered(client, path)
    assert warm == cold
    assert warm_queries < cold_queries


@pytest.fixture
def rows_rendered(monkeypatch):
    """The slugs of the catalogue rows made afresh (not taken from the fragment cache)."""
    made = []
    render = presenters._rendered_rows

    def recording(definitions):
        made.extend(d.slug for d in definitions)
        return render(definitions)

    monkeypatch.setattr(presenters, "_rendered_rows", recording)
    return made


def _task():
    return TaskDefinition.objects.filter(task_set="public").order_by("pk").first()


def _as_without_fragments(client, settings, paths):
    settings.FRAGMENT_CACHE_SECONDS = 0
    return {path: client.get(path).content for path in paths}


def test_an_edited_clause_is_seen_at_once_in_both_languages_and_only_its_row_is_made(
    client,
    canonical_content,
    renders,
    rows_rendered,
    settings,
    django_capture_on_commit_callbacks,
):
    task = _task()
    detail = f"/tasks/{task.slug}/"
    paths = ("/tasks/", "/ko/tasks/", detail, "/ko" + detail)
    for path in paths:
        client.get(path)
    rows_rendered.clear()
    clause = ContractClause.objects.filter(version=task.current_version).first()
    with django_capture_on_commit_callbacks(execute=True):
        ContractClause.objects.filter(pk=clause.pk).update(
            text_en="A clause rewritten in English.", text_ko="새로 고쳐 쓴 조항."
        )
    pages = {path: client.get(path).content for path in paths}
    assert b"A clause rewritten in English." in pages["/tasks/"]
    assert "새로 고쳐 쓴 조항.".encode() in pages["/ko/tasks/"]
    assert "새로 고쳐 쓴 조항.".encode() in pages["/ko" + detail]
    assert rows_rendered == [task.slug, task.slug]
    assert pages == _as_without_fragments(client, settings, pages)


def test_a_title_edited_in_korean_only_changes_the_korean_row(
    client,
    canonical_content,
    renders,
    rows_rendered,
    settings,
    django_capture_on_commit_callbacks,
):
    task = _task()
    client.get("/tasks/"), client.get("/ko/tasks/")
    rows_rendered.clear()
    with django_capture_on_commit_callbacks(execute=True):
        version = TaskVersion.objects.get(pk=task.current_version_id)
        version.title_ko = "한국어로만 고친 제목"
        version.save()
    pages = {path: client.get(path).content for path in ("/tasks/", "/ko/tasks/")}
    assert "한국어로만 고친 제목".encode() in pages["/ko/tasks/"]
    assert "한국어로만 고친 제목".encode() not in pages["/tasks/"]
    assert rows_rendered == [task.slug, task.slug]
    assert pages == _as_without_fragments(client, settings, pages)


def test_a_renamed_market_reaches_every_page_that_names_it(
    client, canonical_content, renders, settings, django_capture_on_commit_callbacks
):
    paths = ["/tasks/", "/ko/tasks/", "/markets/", "/ko/markets/kr/", "/evaluate/", "/ko/"]
    for path in paths:
        client.get(path)
    with django_capture_on_commit_callbacks(execute=True):
        Market.objects.filter(code="KR").update(name_en="Renamed Korea", name_ko="고친 이름")
    pages = {path: client.get(path).content for path in paths}
    assert b"Renamed Korea" in pages["/markets/"]
    assert "고친 이름".encode() in pages["/ko/markets/kr/"]
    assert pages == _as_without_fragments(client, settings, pages)


def test_an_edited_claim_and_a_moved_live_figure_reach_the_methodology_at_once(
    client, canonical_content, renders, settings, django_capture_on_commit_callbacks
):
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    paths = [
        "/methodology/",
        "/ko/methodology/",
        f"/methodology/claims/{claim.section_id}/",
        f"/ko/methodology/claims/{claim.section_id}/",
    ]
    for path in paths:
        client.get(path)
    with django_capture_on_commit_callbacks(execute=True):
        ChapterItem.objects.filter(pk=claim.pk).update(
            detail_en="A claim rewritten in English.", detail_ko="새로 고쳐 쓴 주장."
        )
        # The live figures count validated tasks: one more moves them.
        TaskDefinition.objects.filter(pk=_task().pk).update(lifecycle=Lifecycle.VALIDATED)
    pages = {path: client.get(path).content for path in paths}
    assert b"A claim rewritten in English." in pages["/methodology/"]
    assert "새로 고쳐 쓴 주장.".encode() in pages[f"/ko/methodology/claims/{claim.section_id}/"]
    assert pages == _as_without_fragments(client, settings, pages)


def test_a_page_kept_whole_over_kept_fragments_still_changes_with_them(
    client, canonical_content, page_cache, fragments, django_capture_on_commit_callbacks
):
    """A fragment from the cache runs none of the queries it was made from; the page
    cache must still learn the tables it shows, or it would keep the page past an edit."""
    client.get("/tasks/")
    # Another address of the same page: rendered whole over the rows just kept.
    assert client.get("/tasks/?from=fragments").status_code == 200
    clause = ContractClause.objects.filter(version=_task().current_version).first()
    with django_capture_on_commit_callbacks(execute=True):
        ContractClause.objects.filter(pk=clause.pk).update(text_en="Seen through the page cache.")
    assert "Seen through the page cache." in client.get("/tasks/?from=fragments").text


def test_an_open_transaction_with_its_own_changes_neither_reads_nor_keeps_fragments(
    client, canonical_content, renders
):
    """Before its commit moves the revisions, a change is seen only by its transaction:
    a fragment kept under the old revisions must not hide it, nor outlive it."""
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    client.get("/methodology/")
    ChapterItem.objects.filter(pk=claim.pk).update(detail_en="Not committed yet.")
    assert b"Not committed yet." in client.get("/methodology/").content


@pytest.mark.parametrize("path", ["/tasks/", "/ko/tasks/", "/methodology/", "/ko/methodology/"])
def test_kept_pages_run_a_constant_number_of_queries(
    client, canonical_content, fragments, django_assert_num_queries, path
):
    client.get(path)
    with django_assert_num_queries(WARM_QUERIES[path.removeprefix("/ko")]):
        client.get(path)


# With the page cache off, one read of the revisions for each kept fragment the page
# shows: the shell's edition, then the whole unfiltered catalogue (its rows and balance
# are fragments within it), or the methodology's own edition and its chapters. The
# contracts, the chapters and the live figures are read by none: a kept fragment
# declares its tables to the page cache without a query.
WARM_QUERIES = {"/tasks/": 2, "/methodology/": 4}


@pytest.mark.vendor
def test_a_page_shell_keeps_the_published_edition_without_its_snapshot(
    client, canonical_content, renders
):
    """Every page names the current edition; a published edition carries its catalogue
    snapshot (megabytes at ten thousand tasks), which the shell never shows. Kept whole,
    it was decoded again for every page a bake rendered, tripling a publication's bake."""
    from django.test import RequestFactory

    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish
    from mica.site.context_processors import site_shell
    from tests.factories import LeadFactory

    edition = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=edition.pk, actor=LeadFactory())
    edition.refresh_from_db()
    assert edition.catalogue_snapshot, "a published edition keeps its catalogue snapshot"
    assert edition.version_label_en in client.get("/markets/").content.decode()
    for _kept in range(2):  # made, then taken from the fragment cache
        shown = site_shell(RequestFactory().get("/markets/"))["current_edition"]
        assert shown.pk == edition.pk and shown.version_label == edition.version_label
        assert {"catalogue_snapshot", "pack_texts"} <= shown.get_deferred_fields()
