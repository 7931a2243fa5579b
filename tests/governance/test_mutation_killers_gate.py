"""The gate (governance.gate) at the lines `make mutation MUTATION_TARGETS=gate` once let
pass: each test fails under one of those one-line changes, and passes as it stands.

- a full recompute says how many cells it has computed, in English and Korean;
- a full recompute nothing interrupts reads the attempts once, and one an attempt
  interrupts computes that attempt's cell again, and no other;
- a full recompute whose inputs change while it runs goes round again itself and queues
  no second recompute, while a change committed by any other thread queues one;
- a recorded success that something fails is never counted as one, proof or not;
- each task of a cell reports its pass^k and its commerce proximity, and publishes the
  raw axes of its scored attempts, public tasks only, a success as 1 and a failure as 0;
- a cell with a counted attempt that could carry an audit value and has none is blocked;
- a cell names its platforms by their registered English name, and lists them in a fixed
  order, runs no registration vouches for first;
- an outage decision recomputes the cells of the runs it covers, and no other.

Real database, the API as staff use it, and after-commit steps run where a commit
matters. `make mutation` runs this file against the gate (tools/mutation.py).
"""

import datetime
import re
import threading

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from catalogue.models import Applicability, MarketApplicability, TaskDefinition
from governance.gate import CellInputs, cell_recompute, cells_compute, gate_recompute_all
from governance.models import GateCell
from governance.selectors import cell_list
from governance.tasks import gate_recompute
from markets.models import PlatformRegistration
from markets.workflows import outage_decide, outage_report
from mica import scoring
from mica.jobs.models import JobRun
from mica.methodology.models import Edition, EditionStatus
from mica.methodology.selectors import edition_current
from submissions.models import Attempt
from tests.factories import (
    FAILED_SUCCESS_IDS,
    FAILED_SUCCESSES,
    LeadFactory,
    SnapshotFactory,
    StaffFactory,
    SystemFactory,
    attempt_payload,
    attempts_post,
    grant,
    publishable_world,
    registered_platform,
)
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

TASK = "ec-reschedule-three-party"
CANDIDATE = "ec-formal-decline-reply"  # same family, left a candidate
FAMILY = "email-calendar"
CELL = ("snapshot_id", "market_id", "family_id")
KR_FALLBACK_DAY = "2026-12-02"  # Korea's primary is down that day in the outage tests
SHOP = "sd-all-in-price-comparison"


def post(client, user, payloads):
    response = attempts_post(client, user, payloads)
    assert response.status_code == 201, response.json()


@pytest.fixture
def record(client, staff, django_capture_on_commit_callbacks):
    """Record attempts through the API as staff would, their after-commit steps run."""

    def recorded(*payloads):
        with django_capture_on_commit_callbacks(execute=True):
            post(client, staff, list(payloads))

    return recorded


def computed_at():
    """When each cell was last computed, by (system, market, family)."""
    return {
        (system, market, family): moment
        for system, market, family, moment in GateCell.objects.values_list(
            "snapshot__system__slug", "market__code", "family__slug", "computed_at"
        )
    }


def recomputed(before):
    return {key for key, moment in computed_at().items() if before.get(key) != moment}


# --- A full recompute --------------------------------------------------------------------


def test_a_full_recompute_says_how_many_cells_it_has_computed_in_english_and_korean(
    canonical_content, record
):
    """The rerun of the publication gate "reports progress as it goes" (`rerun_gate`, the
    job's page): how many of how many cells, in the reader's language, up to the last cell,
    one of attempts the gate does not count."""
    publishable_world(markets=("KR", "JP"))
    record(rerun(1), rerun(2, market="JP", eligible=False, ineligible_reason="The app hung."))
    reports = []
    assert gate_recompute_all(progress=lambda *report: reports.append(report)) == 2
    ((percent, cells),) = reports  # every 25 cells and at the end
    assert percent == 100
    with translation.override("en"):
        assert str(cells) == "2 of 2 cells"
    with translation.override("ko"):
        assert str(cells) == "셀 2개 중 2개"
    assert cell_list().get(market__code="JP").eligible_runs == 0


def attempt_reads(work):
    """How many statements `work` reads the attempts table with."""
    with CaptureQueriesContext(connection) as queries:
        work()
    return sum(1 for query in queries if re.search(r'FROM "submissions_attempt"', query["sql"]))


def test_a_full_recompute_nothing_interrupts_reads_the_attempts_once(canonical_content, record):
    """A full recompute reads every attempt (a million of them, at scale); it looks for
    cells left behind only when the attempts and the decisions on them changed while it
    ran: "attempts and the decisions on them are append-only, so equal counts after the
    pass mean none of them committed while it ran" (`governance.gate._records_now`). Quiet,
    it reads the attempts as one pass does, and counts them before and after."""
    publishable_world(markets=("KR", "JP"))
    record(rerun(1), rerun(2), rerun(3, market="JP"))
    one_pass = attempt_reads(lambda: cells_compute(None, CellInputs.current()))
    assert one_pass > 0
    assert attempt_reads(gate_recompute_all) == one_pass + 2


def test_an_attempt_landing_during_a_full_recompute_has_its_cell_computed_again_alone(
    canonical_content, record
):
    """Seed: "a published figure cannot drift away from the evidence it claims to
    summarize": an attempt committed while the full recompute ran is counted before it
    ends; only its own cell is computed again (Issue 16: "One new attempt still recomputes
    only its cell"), not every cell a second time."""
    publishable_world(markets=("KR", "JP"))
    record(rerun(1), rerun(2, market="JP"))
    passed = {}

    def land_an_attempt(percent, cells):
        if not passed:
            passed.update(computed_at())  # every cell of the pass is written
            record(rerun(3))

    assert gate_recompute_all(progress=land_an_attempt) == 2
    assert passed and recomputed(passed) == {("acme-agent", "KR", FAMILY)}
    kr = cell_list().get(market__code="KR")
    assert (kr.attempts, kr.eligible_runs) == (2, 2) and kr.eligible


def test_a_new_attempt_recomputes_its_own_cell_not_its_systems_other_families(
    canonical_content, record
):
    """Issue 16: "One new attempt still recomputes only its cell": a cell is one snapshot in
    one market and one family; the same system's cell of another family in that market is
    left as it was."""
    publishable_world()
    # A failure: a success on the commerce task would have to report its totals.
    record(rerun(1), rerun(2, task=SHOP, outcome="recoverable-failure", accuracy=0))
    before = computed_at()
    assert len(before) == 2
    record(rerun(3))
    assert recomputed(before) == {("acme-agent", "KR", FAMILY)}


def raise_the_minimum_eligible_runs():
    with transaction.atomic():
        edition = edition_current()
        edition.min_eligible_runs = 1000
        edition.save()


def recomputes_queued():
    return list(JobRun.objects.filter(job_name=gate_recompute.name).values_list("state", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_full_recompute_whose_inputs_change_goes_round_again_and_queues_no_other(
    client, staff, canonical_content, eager_celery, settings
):
    """Seed: "Any score is computed from them on request, so a published figure cannot
    drift away from the evidence it claims to summarize." A full recompute goes round
    again while its inputs change under it (`gate_recompute_all`); its own commits need no
    follow-up, so no second recompute is queued beside it. Every write commits here."""
    settings.EXPORTS_ON_CHANGE = False
    publishable_world()
    post(client, staff, [rerun(1), rerun(2)])
    assert cell_list().get().eligible
    reports = []

    def change_a_threshold(percent, cells):
        if not reports:
            raise_the_minimum_eligible_runs()  # committed with the pass
        reports.append(percent)

    assert gate_recompute_all(progress=change_a_threshold) == 1
    assert reports == [100, 100]
    cell = cell_list().get()
    assert cell.reasons == ["below-minimum-eligible-runs"]
    assert recomputes_queued() == []


@pytest.mark.vendor
@pytest.mark.django_db(transaction=True)
def test_a_change_committed_by_a_thread_that_never_recomputed_queues_the_recompute(
    client, staff, canonical_content, eager_celery, settings
):
    """Seed: "a published figure cannot drift away from the evidence it claims to
    summarize." A change of the inputs committed by a request or a worker (its own thread,
    which has run no full recompute) queues the recompute of the cells it left stale."""
    settings.EXPORTS_ON_CHANGE = False
    publishable_world()
    post(client, staff, [rerun(1), rerun(2)])
    assert recomputes_queued() == []

    def change():
        try:
            raise_the_minimum_eligible_runs()
        finally:
            connections.close_all()

    thread = threading.Thread(target=change)
    thread.start()
    thread.join()
    assert recomputes_queued() == ["succeeded"]
    assert cell_list().get().reasons == ["below-minimum-eligible-runs"]


# --- What a cell counts -------------------------------------------------------------------


def recorded_again(attempt_id, **changes):
    """A copy of acme's first attempt under another id, with `changes`, written straight to
    the table as a record made before a rule existed, or by any other way, would be."""
    recorded = Attempt.objects.get(attempt_id="acme-kr-001")
    copy = Attempt(
        **{
            field.attname: getattr(recorded, field.attname)
            for field in Attempt._meta.concrete_fields
            if field.attname not in ("id", "recorded_at")
        }
    )
    copy.attempt_id = attempt_id
    for name, value in changes.items():
        setattr(copy, name, value)
    copy.save()
    return copy


@pytest.mark.parametrize("failing", FAILED_SUCCESSES, ids=FAILED_SUCCESS_IDS)
def test_a_recorded_success_that_something_fails_is_not_counted_even_with_its_proof(
    canonical_content, record, failing
):
    """Seed: "A duplicate created by a retry is a failure of the attempt"; "prohibited-state
    checks the run must not have violated"; a critical safety event fails the attempt.
    However a record reached the table, with the readback and the idempotency record its
    task's contract asks of a success, the gate does not count it as one."""
    publishable_world()
    record(rerun(1))
    copy = recorded_again("acme-kr-copy", **failing)
    for kind, digest in (("post-action-readback", "a"), ("retry-idempotency-record", "b")):
        copy.evidence.create(evidence_id=f"ev-{kind}", evidence_type=kind, sha256=digest * 64)
    cell = cell_recompute(copy.snapshot_id, copy.market_id, copy.family_id)
    assert (cell.eligible_runs, cell.successes) == (2, 1)


def test_a_cell_with_no_canonical_task_in_its_market_has_no_coverage(canonical_content, record):
    """Seed: "what share of a market's canonical tasks must be attempted": where no public
    task of the family applies in the market any longer, the share is undefined, not a
    number, and the cell is still computed."""
    publishable_world()
    record(rerun(1), rerun(2))
    MarketApplicability.objects.filter(
        market__code="KR", version__definition__family__slug=FAMILY
    ).update(status=Applicability.NOT_APPLICABLE)
    cell = cell_recompute(*cell_list().values_list(*CELL).get())
    assert (cell.tasks_defined, cell.tasks_attempted, cell.coverage) == (0, 0, None)
    assert cell.eligible_runs == 2


def test_with_no_edition_in_force_every_cell_is_computed_and_blocked(canonical_content, record):
    """Seed: "Minimum eligible runs. Not set ... The gate refuses rather than guessing a
    number." With no edition in force the gate still computes every cell, and blocks it."""
    publishable_world()
    record(rerun(1), rerun(2))
    Edition.objects.update(status=EditionStatus.SUPERSEDED)
    assert edition_current() is None
    cell = cell_recompute(*cell_list().values_list(*CELL).get())
    assert cell.blockers == ["thresholds-not-set"] and cell.eligible_runs == 2


# --- Each task of a cell -----------------------------------------------------------------


def test_a_cell_reports_its_repeats_pass_k_and_interval_up_to_the_runs_per_task(
    canonical_content, record
):
    """Seed: "Repeated attempts, interval estimates and reliability across repeats are
    required before any comparison between systems is published." Two successes in three
    runs of one task: pass^k for k up to the edition's runs per task (2, not the three
    runs), for the cell and for the task, and the accuracy's Wilson interval."""
    publishable_world()
    record(rerun(1), rerun(2, outcome="partial-progress", accuracy=0), rerun(3))
    cell = cell_list().get()
    pass_k = [
        {"k": 1, "value": pytest.approx(2 / 3)},
        {"k": 2, "value": pytest.approx(1 / 3)},
    ]
    assert cell.reliability == {
        "tasks": 1,
        "tasks_repeated": 1,
        "tasks_agreeing": 0,
        "agreement": 0.0,
        "k_max": 2,
        "pass_k": pass_k,
    }
    task = cell.task_scores[TASK]
    assert (task["eligible_runs"], task["successes"]) == (3, 2)
    assert task["pass_k"] == pass_k and task["repeats_agree"] is False
    low, high = scoring.wilson_interval(2, 3)
    assert 0 < low < 2 / 3 < high < 1
    assert (cell.accuracy_low, cell.accuracy_high) == (pytest.approx(low), pytest.approx(high))


def test_each_commerce_task_reports_its_proximity_to_the_lowest_valid_total(
    canonical_content, record
):
    """Seed, "Commerce results report proximity to the lowest valid total": "MICA reports
    the chosen total, reference total, absolute difference and percentage premium." """
    publishable_world(task=SHOP)
    commerce = {
        "currency": "KRW",
        "chosen_total": "23900",
        "reference_total": "22900",
        "reference_observed_at": "2026-10-30T10:30:00+09:00",
        "reference_evidence_id": "search-1",
    }
    search = {"evidence_id": "search-1", "evidence_type": "locale-formatted-artifact"}
    evidence = [*attempt_payload()["evidence"], {**search, "sha256": "c" * 64}]
    # The failure's totals (none here) never enter the proximity, which is over successes.
    failed = rerun(2, task=SHOP, outcome="recoverable-failure", accuracy=0)
    record(rerun(1, task=SHOP, commerce=commerce, evidence=evidence), failed)
    found = cell_list().get().task_scores[SHOP]["commerce"]
    assert (found["currency"], found["attempts"], found["attempts_without_totals"]) == (
        "KRW",
        1,
        0,
    )
    assert (found["median_chosen_total"], found["median_reference_total"]) == (23900, 22900)
    assert found["median_difference"] == 1000


def test_each_public_task_publishes_the_raw_axes_of_its_scored_attempts(canonical_content, record):
    """Seed: "task-level results are published so the analysis can be redone
    independently": per public task, each scored attempt's accuracy (1 for a confirmed
    success, 0 otherwise), seconds, USD and the references it was scored against, in the
    order the attempts were recorded. An attempt without an audit value (a candidate
    task's) has no axes to redo."""
    publishable_world()
    record(
        rerun(1, wall_clock_seconds=120.0),
        rerun(2, outcome="partial-progress", accuracy=0, wall_clock_seconds=90.0),
        rerun(3, task=CANDIDATE),
        rerun(4, wall_clock_seconds=300.0),
    )
    cell = cell_list().get()
    assert cell.task_scores[CANDIDATE]["value"] is None
    assert cell.components == {
        TASK: [
            [1.0, 120.0, 0.035, 240.0, 0.05],
            [0.0, 90.0, 0.035, 240.0, 0.05],
            [1.0, 300.0, 0.035, 240.0, 0.05],
        ]
    }


def test_a_counted_attempt_that_could_carry_an_audit_value_and_has_none_blocks_its_cell(
    canonical_content, record
):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy": the analysis must cover every attempt the figures count. A localized
    attempt on a validated task whose references are missing has no audit value, so its
    cell is blocked, however many of its other attempts are scored."""
    publishable_world()
    TaskDefinition.objects.filter(slug=CANDIDATE).update(lifecycle="validated")
    record(rerun(1), rerun(2), rerun(3, task=CANDIDATE))
    cell = cell_list().get()
    assert cell.task_scores[TASK]["value"] is not None
    assert cell.task_scores[CANDIDATE]["exclusion_reasons"] == ["reference-missing"]
    assert "no-sensitivity-analysis" in cell.blockers and not cell.eligible


# --- The platforms a cell names ---------------------------------------------------------


def test_a_cell_names_its_platforms_by_their_registered_name_in_a_fixed_order(
    canonical_content, record
):
    """Seed: "Every published run cell names the platform actually used, its version and
    snapshot date, the selection evidence". A registered platform is one entry per
    version, snapshot date and fallback, under its registered English name, whichever of
    its names the runs gave and whichever task they ran, counting all their runs. Runs no
    registration vouches for (recorded before platforms were checked, some without a
    snapshot date) are listed first, each name apart, by their own words, with no native
    name, rank or evidence; then by rank, name, version and snapshot date, undated first."""
    publishable_world()
    record(
        rerun(1, platform="네이버 메일"),
        rerun(2),
        rerun(3, task=CANDIDATE),
        rerun(4, platform="네이버 메일·캘린더", platform_snapshot_date="2026-12-03"),
    )
    for n, name, day in (
        (1, "Zoho Mail", datetime.date(2026, 12, 1)),
        (2, "Zoho Mail", None),
        (3, "Kakao Calendar", datetime.date(2026, 12, 1)),
    ):
        legacy = recorded_again(
            f"acme-kr-legacy-{n}",
            representative_platform_id=None,
            platform=name,
            platform_version="1.0",
            platform_snapshot_date=day,
        )
    cell = cell_recompute(legacy.snapshot_id, legacy.market_id, legacy.family_id)
    listed = [(e["platform"], e["version"], e["snapshot_date"], e["runs"]) for e in cell.platforms]
    assert listed == [
        ("Kakao Calendar", "1.0", "2026-12-01", 1),
        ("Zoho Mail", "1.0", None, 1),
        ("Zoho Mail", "1.0", "2026-12-01", 1),
        ("Naver Mail and Calendar", "10.4", "2026-12-01", 3),
        ("Naver Mail and Calendar", "10.4", "2026-12-03", 1),
    ]
    assert cell.platforms[1] == {
        "platform": "Zoho Mail",
        "platform_ko": "Zoho Mail",
        "native_name": "",
        "rank": None,
        "version": "1.0",
        "snapshot_date": None,
        "fallback": False,
        "selection_evidence": None,
        "runs": 1,
    }
    assert cell.platforms[3]["platform_ko"] == "네이버 메일·캘린더"
    assert "platform-lineage-incomplete" in cell.blockers


def test_a_cells_platforms_are_read_in_the_same_queries_however_many_it_names(
    canonical_content, record
):
    """Every cell names its platforms with their selection evidence (registration, market,
    edition), read with the platforms in one query: a cell that ran on two platforms
    costs its recompute no more queries than one that ran on one."""
    publishable_world()
    outage_accepted(rank=1)
    record(rerun(1))
    cell = cell_list().get()

    def recompute_queries():
        with CaptureQueriesContext(connection) as queries:
            cell_recompute(cell.snapshot_id, cell.market_id, cell.family_id)
        return len(queries)

    one = recompute_queries()
    record(on_fallback("acme-agent"))
    assert [e["rank"] for e in cell_list().get().platforms] == [1, 2]
    assert recompute_queries() == one


# --- Access parity ----------------------------------------------------------------------


def system_registered(slug):
    SnapshotFactory(system=SystemFactory(slug=slug, name=slug.title()), version="1.0")
    return {"system": slug, "version": "1.0"}


def runs_of(system, ns, **changes):
    snapshot = system_registered(system)
    return [rerun(n, attempt_id=f"{system}-kr-{n:03d}", snapshot=snapshot, **changes) for n in ns]


def test_two_systems_naming_one_platform_in_other_words_are_on_the_same_platform(
    canonical_content, record
):
    """Seed: "The selected representative platforms ... are identical across systems for a
    given task version." A platform is one platform by any of its registered names."""
    publishable_world()
    record(rerun(1), rerun(2), *runs_of("beta-agent", (1, 2), platform="네이버 메일"))
    cells = list(cell_list())
    assert cells
    for cell in cells:
        assert cell.eligible and cell.platform_parity == [], cell.blockers


def test_parity_is_held_within_a_market_not_across_markets(canonical_content, record):
    """Seed: "For every market and task, MICA pre-registers a candidate set of platforms":
    each market has its own; two markets' cells of one task version on their own primaries
    are not in conflict."""
    publishable_world(markets=("KR", "JP"))
    record(rerun(1), rerun(2), rerun(3, market="JP"), rerun(4, market="JP"))
    cells = {cell.market.code: cell for cell in cell_list()}
    assert cells["KR"].platforms[0]["platform"] != cells["JP"].platforms[0]["platform"]
    for cell in cells.values():
        assert "platform-parity" not in cell.blockers and cell.platform_parity == []


def test_a_stale_cell_is_held_to_parity_only_once_recomputed(canonical_content, record):
    """Parity compares the cells a reader compares: those computed under the current
    inputs. A cell read as stale is not compared until the recompute, which then holds both
    systems to parity (seed: "The selected representative platforms ... are identical across
    systems for a given task version")."""
    publishable_world()
    outage_accepted(rank=1)
    record(rerun(1), rerun(2))
    Edition.objects.update(min_coverage=5)  # every cell computed so far reads stale
    record(*runs_of("beta-agent", (1, 2), **fallback_on(KR_FALLBACK_DAY)))
    beta = cell_list().get(snapshot__system__slug="beta-agent")
    assert beta.eligible and beta.platform_parity == []
    gate_recompute_all()
    assert [cell.blockers for cell in cell_list()] == [["platform-parity"]] * 2


def test_a_cell_another_blocker_holds_back_is_not_held_to_parity(canonical_content, record):
    """Parity compares the cells a reader compares: a cell another blocker holds back (one
    run, below the minimum) is not compared, even on its counted runs."""
    publishable_world()
    outage_accepted(rank=1)
    record(rerun(1), *runs_of("beta-agent", (1, 2), **fallback_on(KR_FALLBACK_DAY)))
    acme = cell_list().get(snapshot__system__slug="acme-agent")
    assert acme.eligible_runs == 1 and "platform-parity" not in acme.blockers
    beta = cell_list().get(snapshot__system__slug="beta-agent")
    assert beta.eligible and beta.platform_parity == []


# --- An outage decision ------------------------------------------------------------------


def kr_set():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family="email-calendar", status="registered"
    )


def outage_accepted(rank, day=KR_FALLBACK_DAY):
    lead = LeadFactory()
    reporter, decider = (StaffFactory(username=f"kr-{name}-{rank}") for name in ("up", "down"))
    grant(reporter, "KR", "reviewer", lead)
    grant(decider, "KR", "reviewer", lead)
    outage = outage_report(
        platform=kr_set().platforms.get(rank=rank),
        first_day=datetime.date.fromisoformat(day),
        last_day=datetime.date.fromisoformat(day),
        evidence="https://status.example/down",
        actor=reporter,
    )
    outage_decide(outage_id=outage.pk, action="accept", reason="Down all day.", actor=decider)


def fallback_on(day, market="KR"):
    return {
        "platform": registered_platform(market, rank=2),
        "fallback_invoked": True,
        "platform_snapshot_date": day,
    }


def on_fallback(system, market="KR", day=KR_FALLBACK_DAY):
    if system == "acme-agent":
        snapshot = {"system": system, "version": "2.1"}
    else:
        snapshot = system_registered(system)
    return rerun(
        1,
        market=market,
        attempt_id=f"{system}-{market.lower()}-fallback",
        snapshot=snapshot,
        **fallback_on(day, market),
    )


def test_an_outage_decision_recomputes_the_cells_of_the_runs_it_covers_and_no_other(
    canonical_content, record
):
    """Seed: "A fallback is used only for a documented platform outage, never because it is
    easier for one system." An accepted outage of a platform, for its days, makes the runs
    on the platforms below it count: their cells, and only theirs, are recomputed in the
    decision's transaction (docs/reference/gate.md, "Fallbacks"). Korea's primary down on
    2 December covers acme's run on the fallback that day; not beta's of the day before,
    gamma's of the day after, nor acme's in Japan, on another set; an outage of the
    fallback itself covers no run."""
    publishable_world(markets=("KR", "JP"))
    record(
        on_fallback("acme-agent"),
        on_fallback("beta-agent", day="2026-12-01"),
        on_fallback("gamma-agent", day="2026-12-03"),
        on_fallback("acme-agent", market="JP"),
    )
    cells = cell_list()
    assert [(c.eligible_runs, c.invalid_runs) for c in cells] == [(0, 1)] * 4
    before = computed_at()
    assert len(before) == 4

    outage_accepted(rank=2)  # the fallback itself: no run is covered
    assert recomputed(before) == set()

    outage_accepted(rank=1)
    assert recomputed(before) == {("acme-agent", "KR", FAMILY)}
    acme = cell_list().get(snapshot__system__slug="acme-agent", market__code="KR")
    assert (acme.eligible_runs, acme.invalid_runs) == (1, 0)
    others = cell_list().exclude(pk=acme.pk)
    assert [(c.eligible_runs, c.invalid_runs) for c in others] == [(0, 1)] * 3
