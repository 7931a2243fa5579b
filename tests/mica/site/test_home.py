"""The home page: a ledger counted from the records, the method's own words, both languages."""

import html
import json
import re

import pytest
from django.core.management import call_command

from catalogue.models import Lifecycle, LocalReview, MarketApplicability, TaskDefinition, TaskSet
from catalogue.services import task_promote, task_version_touch
from catalogue.workflows import review_transition
from governance.models import GateCell
from markets.models import CompetenceRole, Market
from mica.methodology.models import ContractItem, ContractSection, Edition, GlossaryTerm
from mica.vocabulary import DiagnosticAxis
from tests.factories import (
    LeadFactory,
    StaffFactory,
    api_auth,
    attempt_payload,
    grant,
    independent_rerun,
    publishable_world,
)

pytestmark = pytest.mark.django_db

FIGURE_RE = re.compile(
    r'data-figure="(?P<key>[^"]+)">\s*<dt>[^<]*</dt>\s*'
    r'<dd class="(?P<kind>ledger-figure|ledger-absent)">(?P<text>.*?)</dd>',
    re.DOTALL,
)
HREF_RE = re.compile(r'<a [^>]*href="([^"#]+)(?:#[^"]*)?"')
# The home page's render, whatever the size of the records: the shell's edition (2),
# the view's edition (2), markets, families, task counts, the gate inputs' fingerprint (2),
# the gate's aggregate, and the framework's contract sections, their items and the
# glossary term.
HOME_QUERIES = 13


@pytest.fixture
def editors(canonical_content):
    """A method lead, a KR author and a KR reviewer who is not the author."""
    lead = LeadFactory()
    author = StaffFactory(username="author")
    reviewer = StaffFactory(username="reviewer")
    grant(author, "KR", CompetenceRole.AUTHOR, lead)
    grant(reviewer, "KR", CompetenceRole.REVIEWER, lead)
    return {"lead": lead, "author": author, "reviewer": reviewer}


def ledger(client, path="/"):
    """{figure: (kind, text)}: a number is "ledger-figure", words are "ledger-absent"."""
    page = client.get(path).text
    figures = {
        m["key"]: (m["kind"], html.unescape(re.sub(r"<[^>]+>", "", m["text"])).strip())
        for m in FIGURE_RE.finditer(page)
    }
    assert len(figures) == 7, figures
    return figures


def main_of(page):
    return page[page.index("<main") : page.index("</main>")]


def public_tasks(lifecycle):
    return TaskDefinition.objects.filter(
        task_set=TaskSet.PUBLIC, current_version__isnull=False, lifecycle=lifecycle
    ).count()


def record_attempt(client, user, **changes):
    payload = attempt_payload()
    payload.update(changes)
    response = client.post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json", **api_auth(user)
    )
    assert response.status_code == 201, response.json()


def promote(definition, editors):
    """Close every promotion gap the way editors do, then promote through the service."""
    version = definition.current_version
    version.reference_status, version.reference_sample_size = "registered", 12
    version.speed_reference_seconds, version.cost_reference_usd = 240, "0.4200"
    version.save()
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    task_version_touch(version=version)
    review = LocalReview.objects.create(
        version=version, market=Market.objects.get(code="KR"), author=editors["author"]
    )
    review_transition(review_id=review.pk, action="submit", actor=editors["author"])
    review_transition(review_id=review.pk, action="approve", actor=editors["reviewer"])
    return task_promote(definition_id=definition.pk, actor=editors["lead"])


def test_the_ledger_counts_the_canonical_records(client, canonical_content):
    edition = Edition.objects.get()
    figures = ledger(client)
    markets = Market.objects.filter(editions__edition=edition).count()
    assert figures["markets"] == ("ledger-figure", str(markets))
    families = TaskDefinition.objects.values("family").distinct().count()
    assert figures["families"] == ("ledger-figure", str(families))
    assert figures["candidate-tasks"] == ("ledger-figure", str(public_tasks(Lifecycle.CANDIDATE)))
    # What cannot exist yet is said in words, never printed as a zero.
    assert figures["validated-tasks"][0] == "ledger-absent"
    assert figures["published-result-families"] == (
        "ledger-absent",
        "None published yet: the gate has passed no cell.",
    )
    assert figures["verified-systems"][0] == "ledger-absent"
    assert figures["measured-runs"][0] == "ledger-absent"
    assert figures["measured-runs"][1].startswith("Not measured.")
    assert all(text != "0" for _kind, text in figures.values())


def test_a_validated_task_moves_the_ledger(client, editors):
    candidates = public_tasks(Lifecycle.CANDIDATE)
    definition = TaskDefinition.objects.get(slug="gc-resident-record-extract")
    assert promote(definition, editors).lifecycle == Lifecycle.VALIDATED
    figures = ledger(client)
    assert figures["validated-tasks"] == ("ledger-figure", "1")
    assert figures["candidate-tasks"] == ("ledger-figure", str(candidates - 1))


def test_holdout_tasks_are_never_counted(client, canonical_content):
    candidates = public_tasks(Lifecycle.CANDIDATE)
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(task_set=TaskSet.HOLDOUT)
    assert ledger(client)["candidate-tasks"] == ("ledger-figure", str(candidates - 1))


def test_official_independent_reruns_make_a_verified_system_and_measured_runs(client, staff):
    record_attempt(client, staff, verification="independent-rerun")
    record_attempt(client, staff, verification="independent-rerun", attempt_id="acme-kr-002")
    figures = ledger(client)
    assert figures["verified-systems"] == ("ledger-figure", "1")
    assert figures["measured-runs"] == ("ledger-figure", "2")
    # Thresholds are unset: the gate still refuses, and the page says so.
    assert figures["published-result-families"][0] == "ledger-absent"
    page = client.get("/").text
    assert "publication thresholds are not set, so the gate refuses every result" in page


def test_self_reported_runs_are_measured_but_verify_no_system(client, operator):
    record_attempt(client, operator)
    figures = ledger(client)
    assert figures["measured-runs"] == ("ledger-figure", "1")
    assert figures["verified-systems"][0] == "ledger-absent"


def test_a_passed_cell_publishes_its_family_and_the_readiness_says_so(client, staff):
    publishable_world()
    for n in (1, 2):
        response = client.post(
            "/api/v1/attempts/",
            json.dumps(independent_rerun(n)),
            content_type="application/json",
            **api_auth(staff),
        )
        assert response.status_code == 201, response.json()
    figures = ledger(client)
    assert figures["published-result-families"] == ("ledger-figure", "1")
    page = client.get("/").text
    assert "Results are eligible for publication: the gate has passed cells in 1 task family." in (
        " ".join(page.split())
    )
    korean = client.get("/ko/").text
    assert "공개할 수 있는 결과가 있습니다." in korean


def test_thresholds_set_without_a_passed_cell_is_still_nothing(client, canonical_content):
    Edition.objects.update(
        min_eligible_runs=5, min_coverage=50, runs_per_task=3, max_ineligible_discard_rate=10
    )
    page = " ".join(client.get("/").text.split())
    assert "The thresholds are set, and no cell has passed the gate." in page
    assert ledger(client)["published-result-families"][0] == "ledger-absent"


def test_two_thresholds_of_four_set_are_not_thresholds_set(client, canonical_content):
    """Seed: "MICA has not yet agreed runs per task, a minimum cell sample size, task
    coverage, or a maximum ineligible discard rate, so no result can be marked
    publication eligible." """
    Edition.objects.update(min_eligible_runs=5, min_coverage=50)
    page = " ".join(client.get("/").text.split())
    assert "publication thresholds are not set, so the gate refuses every result" in page


def test_demo_runs_are_never_counted(client, staff):
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    assert GateCell.objects.exists()
    figures = ledger(client)
    for key in ("verified-systems", "measured-runs", "published-result-families"):
        assert figures[key][0] == "ledger-absent", key
    # Beside demo runs, an official run is counted alone.
    record_attempt(client, staff, verification="independent-rerun")
    figures = ledger(client)
    assert figures["verified-systems"] == ("ledger-figure", "1")
    assert figures["measured-runs"] == ("ledger-figure", "1")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_framework_and_axes_come_from_the_edition_records(client, canonical_content, language):
    page = client.get("/ko/" if language == "ko" else "/").text
    text_of_page = html.unescape(page)
    edition = Edition.objects.get()
    term = GlossaryTerm.objects.get(edition=edition, section_id="task-contract")
    assert getattr(term, f"definition_{language}") in text_of_page
    axes = ContractSection.objects.get(edition=edition, section_id="axes")
    assert text_of_page.count(getattr(axes, f"title_{language}")) >= 2
    cards = re.findall(r'data-outcome-axis="([^"]+)"', page)
    items = ContractItem.objects.filter(contract_section=axes).order_by("position")
    assert cards == [item.section_id for item in items]
    for item in items:
        name, _sep, measure = getattr(item, f"term_{language}").partition(" · ")
        for text in (name, measure, getattr(item, f"detail_{language}")):
            assert text in text_of_page, text
    assert re.findall(r'data-diagnostic-axis="([^"]+)"', page) == list(DiagnosticAxis.values)
    for axis in DiagnosticAxis.values:
        item = ContractItem.objects.get(edition=edition, section_id=f"diagnostics-{axis}")
        assert getattr(item, f"detail_{language}") in text_of_page
        prefix = "/ko" if language == "ko" else ""
        assert f'href="{prefix}/methodology/claims/{item.section_id}/"' in page


def test_korean_home_is_written_in_korean(client, canonical_content):
    page = client.get("/ko/").text
    assert '<html lang="ko">' in page
    for korean in ("실시간 현황", "공개 준비 상태", "시험하고, 측정하고, 설명합니다", "판정 규칙"):
        assert korean in page
    for english in ("The live ledger", "Readiness", "Decision rule", "Published result families"):
        assert english not in page


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_markets_in_their_native_scripts_link_to_their_editions(client, canonical_content, prefix):
    page = client.get(f"{prefix}/").text
    markets = list(Market.objects.filter(editions__isnull=False).order_by("display_order"))
    assert re.findall(r'data-market="([A-Z]{2})"', page) == [m.code for m in markets]
    for market in markets:
        native = html.escape(market.native_name, quote=False)
        assert f'lang="{market.native_lang}" dir="auto">{native}</span>' in page
        assert f'href="{prefix}/markets/{market.code.lower()}/"' in page


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_families_link_to_the_catalogue_filtered_by_family(client, canonical_content, prefix):
    page = client.get(f"{prefix}/").text
    slugs = re.findall(r'data-family="([^"]+)"', page)
    assert slugs and len(slugs) == len(set(slugs))
    for slug in slugs:
        assert f'href="{prefix}/tasks/?family={slug}"' in page
    filtered = client.get(f"{prefix}/tasks/", {"family": slugs[0]}).text
    other = TaskDefinition.objects.exclude(family__slug=slugs[0]).first()
    assert f"/tasks/{other.slug}/" not in filtered


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_every_link_on_the_home_page_resolves(client, canonical_content, prefix):
    links = set(HREF_RE.findall(main_of(client.get(f"{prefix}/").text)))
    assert len(links) > 25
    for link in sorted(links):
        response = client.get(html.unescape(link))
        assert response.status_code == 200, link
        if prefix:
            assert link.startswith("/ko/") or link.startswith("/static/"), link


def test_the_home_page_runs_a_fixed_number_of_queries(
    client, staff, settings, django_assert_num_queries
):
    # The render itself, never a copy from the page cache.
    settings.PAGE_CACHE_SECONDS = 0
    with django_assert_num_queries(HOME_QUERIES):
        client.get("/")
    record_attempt(client, staff, verification="independent-rerun")
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    Edition.objects.update(min_eligible_runs=1, min_coverage=1)
    with django_assert_num_queries(HOME_QUERIES):
        client.get("/")
    with django_assert_num_queries(HOME_QUERIES):
        client.get("/ko/")
