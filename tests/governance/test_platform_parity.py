"""Every published cell names its platforms with their selection evidence, and a cell is
blocked when another system of its table ran a task version on other platforms.

Seed: "Every published run cell names the platform actually used, its version and
snapshot date, the selection evidence, and whether a pre-registered fallback was
invoked." and "The selected representative platforms, the account tier, the granted
permissions, the initial state and the confirmation boundary are identical across
systems for a given task version."
"""

import csv
import datetime
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from governance.gate import cell_recompute
from governance.models import GateCell
from governance.selectors import cell_list
from markets.models import PlatformRegistration
from markets.workflows import outage_decide, outage_report
from submissions.invalidation import attempt_invalidate
from submissions.models import Attempt
from tests.factories import (
    LeadFactory,
    SnapshotFactory,
    StaffFactory,
    SystemFactory,
    api_auth,
    grant,
    publishable_world,
    registered_platform,
)
from tests.factories import (
    independent_rerun as rerun,
)

pytestmark = pytest.mark.django_db

SEED = Path(__file__).parents[1] / "fixtures" / "seeds"
LINEAGE = (
    "Every published run cell names the platform actually used, its version and snapshot "
    "date, the selection evidence, and whether a pre-registered fallback was invoked."
)
PARITY = (
    "The selected representative platforms, the account tier, the granted permissions, the "
    "initial state and the confirmation boundary are identical across systems for a given "
    "task version."
)
BETA = {"system": "beta-agent", "version": "1.0"}


def test_the_seed_says_it():
    (seed,) = SEED.glob("000_*.txt")
    text = " ".join(seed.read_text(encoding="utf-8").split())
    assert LINEAGE in text and PARITY in text


def post(client, user, payloads):
    return client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )


@pytest.fixture
def world(canonical_content, staff):
    return publishable_world()


def kr_set():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family="email-calendar", status="registered"
    )


def cell_of(system):
    return cell_list().get(snapshot__system__slug=system)


# --- The platforms a cell names --------------------------------------------------------


@pytest.mark.vendor
def test_a_cell_on_a_registered_frozen_platform_is_eligible_and_names_it_everywhere(
    client, staff, world, tmp_path, settings, django_capture_on_commit_callbacks
):
    """Seed: "Every published run cell names the platform actually used, its version and
    snapshot date, the selection evidence, and whether a pre-registered fallback was
    invoked." In the page, /api/v1/cells/ and mica-gate.json."""
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    cell = cell_of("acme-agent")
    assert cell.eligible and cell.blockers == []
    registration = kr_set()
    (entry,) = cell.platforms
    assert entry == {
        "platform": "Naver Mail and Calendar",
        "platform_ko": "네이버 메일·캘린더",
        "native_name": "네이버 메일",
        "rank": 1,
        "version": "10.4",
        "snapshot_date": "2026-12-01",
        "fallback": False,
        "runs": 2,
        "selection_evidence": {
            "registration": registration.pk,
            "market": "KR",
            "task_family": "email-calendar",
            "edition": registration.market_edition.edition.slug,
            "status": "registered",
            "pre_registered_at": "2026-11-30T00:00:00+00:00",
            "supersedes": None,
        },
    }
    page = client.get(f"/evidence/{cell.cell_id}/").text
    for shown in ("Naver Mail and Calendar", "10.4", "2026-12-01", "primary"):
        assert shown in page
    assert "Pre-registered 2026-11-30 for this family in KR" in page
    assert 'href="/markets/kr/#platforms-email-calendar"' in page
    korean = client.get(f"/ko/evidence/{cell.cell_id}/").text
    assert "네이버 메일·캘린더" in korean and "2026-11-30 사전 등록" in korean
    (api,) = client.get("/api/v1/cells/").json()["results"]
    assert api["platforms"] == [entry] and api["platform_parity"] == []
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))
    current = tmp_path / "current"
    (exported,) = json.loads((current / "mica-gate.json").read_text(encoding="utf-8"))["cells"]
    assert exported["platforms"] == [entry] and exported["platform_parity"] == []
    with open(current / "mica-gate.csv", encoding="utf-8") as handle:
        (row,) = csv.DictReader(handle)
    assert row["platforms"] == "Naver Mail and Calendar 10.4 2026-12-01"


def test_a_cell_names_a_fallback_run_counted_on_an_accepted_outage(client, staff, world):
    """ "whether a pre-registered fallback was invoked": its rank and the flag."""
    accept_outage_of_the_primary()
    fallback = registered_platform("KR", rank=2)
    runs = [rerun(n, platform=fallback, fallback_invoked=True) for n in (1, 2)]
    assert post(client, staff, runs).status_code == 201
    cell = cell_of("acme-agent")
    assert cell.eligible
    (entry,) = cell.platforms
    assert (entry["platform"], entry["rank"], entry["fallback"]) == (fallback, 2, True)
    page = client.get(f"/evidence/{cell.cell_id}/").text
    assert "pre-registered fallback 2" in page


def test_a_run_recorded_before_platforms_were_checked_blocks_its_cell(client, staff, world):
    """A run whose platform was never matched to a frozen registration has no selection
    evidence: its cell is blocked `platform-lineage-incomplete`, and says so."""
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    legacy = Attempt.objects.get(attempt_id="acme-kr-001")
    legacy.pk = legacy.id = None
    legacy._state.adding = True
    legacy.attempt_id, legacy.representative_platform, legacy.platform = (
        "acme-kr-legacy",
        None,
        "Kakao Calendar",
    )
    legacy.save()
    cell = cell_recompute(legacy.snapshot_id, legacy.market_id, legacy.family_id)
    assert cell.blockers == ["platform-lineage-incomplete"]
    names = [entry["platform"] for entry in cell.platforms]
    assert names == ["Kakao Calendar", "Naver Mail and Calendar"]
    assert cell.platforms[0]["rank"] is None and cell.platforms[0]["selection_evidence"] is None
    page = client.get(f"/evidence/{cell.cell_id}/").text
    assert "Not pre-registered: recorded before platforms were checked." in page


# --- Access parity ----------------------------------------------------------------------


def accept_outage_of_the_primary():
    lead = LeadFactory()
    reporter, decider = StaffFactory(username="kr-reporter"), StaffFactory(username="kr-decider")
    grant(reporter, "KR", "reviewer", lead)
    grant(decider, "KR", "reviewer", lead)
    outage = outage_report(
        platform=kr_set().platforms.get(rank=1),
        first_day=datetime.date(2026, 12, 1),
        last_day=datetime.date(2026, 12, 1),
        evidence="https://status.example/naver-2026-12-01",
        actor=reporter,
    )
    outage_decide(outage_id=outage.pk, action="accept", reason="Down all day.", actor=decider)


def beta_runs(platform=None, fallback=False):
    changes = {"snapshot": BETA, "fallback_invoked": fallback}
    if platform:
        changes["platform"] = platform
    return [rerun(n, attempt_id=f"beta-kr-{n:03d}", **changes) for n in (1, 2)]


@pytest.fixture
def beta(world):
    return SnapshotFactory(
        system=SystemFactory(slug="beta-agent", name="Beta Agent"), version="1.0"
    )


def test_two_systems_on_different_platforms_for_a_task_version_block_each_other(
    client, staff, beta, django_capture_on_commit_callbacks
):
    """Seed: "The selected representative platforms ... are identical across systems for
    a given task version." A documented fallback is still another platform: both cells
    are blocked, each naming the other and both platforms."""
    accept_outage_of_the_primary()
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    assert cell_of("acme-agent").eligible
    fallback = registered_platform("KR", rank=2)
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, staff, beta_runs(fallback, fallback=True)).status_code == 201
    acme, beta_cell = cell_of("acme-agent"), cell_of("beta-agent")
    assert acme.blockers == beta_cell.blockers == ["platform-parity"]
    assert not acme.eligible and not beta_cell.eligible
    assert acme.platform_parity == [
        {
            "task": "ec-reschedule-three-party",
            "platforms": ["Naver Mail and Calendar"],
            "other_cell": beta_cell.cell_id,
            "other_platforms": [fallback],
        }
    ]
    assert beta_cell.platform_parity[0]["other_cell"] == acme.cell_id
    page = client.get(f"/evidence/{acme.cell_id}/").text
    assert f"Naver Mail and Calendar here; {fallback} in {beta_cell.cell_id}" in page
    assert "every system gets the same pre-registered platform" in page
    api = {c["cell"]: c for c in client.get("/api/v1/cells/").json()["results"]}
    assert api[acme.cell_id]["blockers"] == ["platform-parity"]
    assert api[beta_cell.cell_id]["platform_parity"][0]["other_platforms"] == [
        "Naver Mail and Calendar"
    ]


def test_two_systems_on_the_same_platform_are_both_eligible(client, staff, beta):
    assert post(client, staff, [rerun(1), rerun(2), *beta_runs()]).status_code == 201
    assert cell_of("acme-agent").eligible and cell_of("beta-agent").eligible


def test_only_cells_a_reader_compares_are_held_to_parity(client, staff, beta, lead):
    """A cell another blocker holds back is not in the published table: it blocks no
    other cell, and once it is out the other is eligible again."""
    accept_outage_of_the_primary()
    fallback = registered_platform("KR", rank=2)
    runs = [rerun(1), rerun(2), *beta_runs(fallback, fallback=True)]
    assert post(client, staff, runs).status_code == 201
    assert cell_of("beta-agent").blockers == ["platform-parity"]
    for attempt in Attempt.objects.filter(snapshot__system__slug="acme-agent"):
        attempt_invalidate(attempt_id=attempt.pk, reason="A stale replica.", actor=lead)
    acme, beta_cell = cell_of("acme-agent"), cell_of("beta-agent")
    assert "platform-parity" not in acme.blockers and acme.blockers
    assert beta_cell.eligible and beta_cell.platform_parity == []


@pytest.fixture
def lead(world):
    return LeadFactory()


def validated_and_reviewed(definition):
    """A task the gate takes as validated, with registered references, and approved in KR
    (the review's four eyes are tested where reviews are)."""
    from catalogue.models import LocalReview, TaskDefinition, TaskVersion
    from markets.models import Market
    from tests.factories import REFERENCES

    TaskDefinition.objects.filter(pk=definition.pk).update(lifecycle="validated")
    TaskVersion.objects.filter(definition=definition).update(**REFERENCES)
    LocalReview.objects.create(
        version=TaskVersion.objects.get(definition=definition),
        market=Market.objects.get(code="KR"),
        author=StaffFactory(username="holdout-author"),
        state="approved",
        approved_hash="pinned-for-the-test",
    )


def test_a_parity_conflict_on_a_holdout_task_blocks_without_naming_it(client, staff, beta):
    """A holdout task is never named in public; its conflict still blocks."""
    from tests.factories import holdout_keeper, holdout_task

    validated_and_reviewed(holdout_task())
    keeper = holdout_keeper()
    accept_outage_of_the_primary()
    fallback = registered_platform("KR", rank=2)
    on_holdout = {"task": "ec-secret-holdout-item"}
    runs = [
        rerun(1),
        rerun(2),
        *beta_runs(),
        rerun(3, **on_holdout),
        rerun(
            4,
            attempt_id="beta-kr-004",
            snapshot=BETA,
            platform=fallback,
            fallback_invoked=True,
            **on_holdout,
        ),
    ]
    assert post(client, keeper, runs).status_code == 201
    beta_cell = GateCell.objects.get(snapshot__system__slug="beta-agent")
    assert "platform-parity" in beta_cell.blockers
    assert [c["task"] for c in beta_cell.platform_parity] == [None]
    assert "ec-secret-holdout-item" not in client.get(f"/evidence/{beta_cell.cell_id}/").text


def test_judging_parity_reads_what_a_conflict_names_with_the_cells(
    client, staff, beta, django_capture_on_commit_callbacks
):
    """A conflict names the other cell by its system, market and family: the table's cells
    are read with them, so judging parity costs no query per conflict."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from governance.models import GateCell

    accept_outage_of_the_primary()
    fallback = registered_platform("KR", rank=2)
    with django_capture_on_commit_callbacks(execute=True):
        runs = [rerun(1), rerun(2), *beta_runs(fallback, fallback=True)]
        assert post(client, staff, runs).status_code == 201
    acme = cell_of("acme-agent")
    with CaptureQueriesContext(connection) as queries:
        cell_recompute(acme.snapshot_id, acme.market_id, acme.family_id)
    assert cell_of("acme-agent").platform_parity, "the recompute judged a conflict"
    named = [GateCell.snapshot.field, GateCell.market.field, GateCell.family.field]
    tables = [field.related_model._meta.db_table for field in named]
    tables.append(beta.system._meta.db_table)
    one_by_one = [
        q["sql"] for q in queries.captured_queries
        for table in tables if f'FROM "{table}" WHERE "{table}"."id" = ' in q["sql"]
    ]  # fmt: skip
    assert one_by_one == []
