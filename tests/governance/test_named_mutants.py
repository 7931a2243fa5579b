"""The gate's rules at the one line that states each, where a one-line change once went
unnoticed: every test here fails if that line is changed, and passes as it stands.

- "one validated task is enough": the cell's tasks must all be validated, not any;
- "a local review in any market counts": the review must be in the cell's market;
- "the canonical set ignores applicability": a task that does not apply in a market is
  not part of that market's canonical set;
- "the per-task median latency includes failures": speed is taken over successes only,
  per cell and per task;
- "a stale cell counts under a market figure": a cell computed under other inputs
  withholds the figures above it, as a blocked one does;
- "blocked cells enter the published analysis": the sensitivity analysis ranks only
  figures that are published now, so a stale cell is in none of its tables;
- and the inputs' fingerprint (governance.gate_inputs) sees every input a cell's figures
  follow: a version's task and references, even traded between two versions; whether
  its task is validated, public and current; an approved local review of that version in
  that market; a task's applicability, even traded between two tasks or two markets; and
  it is taken with no edition in force too.

`make mutation` runs this file against the gate, its inputs, the figures above the cells
and the sensitivity analysis (tools/mutation.py).
"""

import json

import pytest
from django.contrib.auth import get_user_model

from catalogue.models import (
    Applicability,
    LocalReview,
    MarketApplicability,
    TaskDefinition,
    TaskVersion,
)
from catalogue.workflows import review_transition
from governance.aggregates import canonical_tasks, snapshot_aggregates
from governance.gate import cell_recompute
from governance.gate_inputs import gate_inputs_fingerprint
from governance.selectors import cell_list
from governance.sensitivity import gate_sensitivity
from markets.models import Market
from mica.methodology.models import Edition
from mica.methodology.selectors import edition_current
from tests.factories import (
    SnapshotFactory,
    SystemFactory,
    api_auth,
    approve_locally,
    publishable_world,
    references_registered,
)
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

TASK = "ec-reschedule-three-party"
CANDIDATE = "ec-formal-decline-reply"  # same family, left a candidate
FAMILY = "email-calendar"
ROLES = ("author", "reviewer")  # tests.factories.approve_locally's users, per market
User = get_user_model()


@pytest.fixture
def post(client, django_capture_on_commit_callbacks):
    """Record attempts through the API as staff would, their after-commit steps run."""

    def record(user, payloads):
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                "/api/v1/attempts/",
                json.dumps(payloads),
                content_type="application/json",
                **api_auth(user),
            )
        assert response.status_code == 201, response.json()

    return record


def cell_in(market="KR", system="acme-agent"):
    return cell_list().get(market__code=market, snapshot__system__slug=system)


def _recompute(cell):
    return cell_recompute(cell.snapshot_id, cell.market_id, cell.family_id)


def test_one_candidate_task_blocks_its_cell_however_many_are_validated(post, staff):
    """Seed: "They are provisional public-set candidates: not executable validated
    scenarios, not measured results"; "Candidates are design material. The published
    definitions exist so the method can be criticized before it produces a number."
    Every task run in a cell must be validated, not one of them."""
    publishable_world()
    post(staff, [rerun(1), rerun(2)])
    assert cell_in().blockers == []
    assert TaskDefinition.objects.get(slug=CANDIDATE).lifecycle == "candidate"
    post(staff, [rerun(n, task=CANDIDATE) for n in (3, 4)])
    cell = cell_in()
    assert "task-not-validated" in cell.blockers and not cell.eligible


def test_a_local_review_counts_only_in_its_own_market_and_for_its_own_version(post, staff):
    """Seed: "Locally authored, locally reviewed. A task is authored and reviewed by
    someone who uses the market's services"; "Reaching locally authored text and local
    review in every market edition is required before any market's results could be
    published". A review approved in Korea does not review the task for Japan, nor does
    Japan's approved review of another task, nor its own review until it is approved;
    its approval reads the cell stale until recomputed."""
    definition = publishable_world(markets=("KR",))
    other = references_registered(TaskDefinition.objects.get(slug=CANDIDATE).current_version)
    approve_locally(other.pk, "JP")
    author, reviewer = (User.objects.get(username=f"jp-{role}") for role in ROLES)
    review = LocalReview.objects.create(
        version_id=definition.current_version_id,
        market=Market.objects.get(code="JP"),
        author=author,
    )
    review_transition(review_id=review.pk, action="submit", actor=author)
    post(staff, [rerun(1, market="JP"), rerun(2, market="JP")])
    assert cell_in("JP").blockers == ["not-locally-reviewed"]
    review_transition(review_id=review.pk, action="approve", actor=reviewer)
    assert cell_in("JP").reasons == ["stale"]
    assert _recompute(cell_in("JP")).blockers == []


def only_the_task_applies_in_korea():
    """Korea's canonical sets reduced to the one task: every other public task is marked
    not applicable there, so one scored task completes Korea's market figure."""
    korea = MarketApplicability.objects.filter(market__code="KR")
    korea.exclude(version__definition__slug=TASK).update(status=Applicability.NOT_APPLICABLE)
    korea.filter(version__definition__slug=TASK).update(status=Applicability.APPLICABLE)


def test_the_canonical_set_holds_only_the_tasks_that_apply_in_the_market(post, staff):
    """Seed: "Family and country scores. The arithmetic mean of eligible attempt-derived
    task scores in that family or market. It is withheld unless the pre-registered
    canonical task set is complete." A task that does not apply in a market is not in its
    set, so it neither withholds the market figure nor counts as missing; a task that
    needs a variant there still applies."""
    only_the_task_applies_in_korea()
    publishable_world()
    canonical = canonical_tasks()
    assert canonical[("KR", FAMILY)] == {TASK}
    assert not [key for key in canonical if key[0] == "KR" and key[1] != FAMILY]
    post(staff, [rerun(1), rerun(2)])
    korea = snapshot_aggregates(list(cell_list()))["markets"]["KR"]
    assert (korea.value, korea.withheld_reason) == (80.0, None)
    MarketApplicability.objects.filter(
        market__code="KR", version__definition__slug=CANDIDATE
    ).update(status=Applicability.VARIANT_REQUIRED)
    assert canonical_tasks()[("KR", FAMILY)] == {TASK, CANDIDATE}


def test_speed_is_taken_over_successes_only_per_cell_and_per_task(post, staff):
    """Seed: "Speed · wall-clock seconds, successful eligible runs only. How long a
    successful run took end to end. Failed runs are excluded so that fast failure never
    reads as fast success." One success of 300 s and two failures of 30 s: the speed
    figures, the cell's and the task's, are 300 s; only the all-runs median says 30."""
    publishable_world()
    failures = [
        rerun(n, outcome="recoverable-failure", accuracy=0, wall_clock_seconds=30.0) for n in (2, 3)
    ]
    post(staff, [rerun(1), *failures])
    cell = cell_in()
    assert (cell.eligible_runs, cell.successes) == (3, 1)
    assert (cell.p50_seconds, cell.p95_seconds) == (300.0, 300.0)
    assert cell.task_scores[TASK]["median_success_seconds"] == 300.0
    assert cell.eligible_median_seconds == 30.0


@pytest.fixture
def stale_acme_fresh_beta(post, staff):
    """Acme's Korean cell, eligible when computed; then a threshold changes (committed,
    the recompute it queues not yet run), so acme's cell is stale; then beta's attempts
    land and beta's cell alone is computed under the new inputs."""
    only_the_task_applies_in_korea()
    publishable_world()
    post(staff, [rerun(1), rerun(2)])
    assert cell_in().eligible
    Edition.objects.update(min_eligible_runs=1)
    SnapshotFactory(system=SystemFactory(slug="beta-agent", name="Beta"), version="1.0")
    beta = [
        {
            **rerun(n),
            "attempt_id": f"beta-kr-{n:03d}",
            "snapshot": {"system": "beta-agent", "version": "1.0"},
        }
        for n in (1, 2)
    ]
    post(staff, beta)
    acme, fresh = cell_in(), cell_in(system="beta-agent")
    assert acme.publication_eligible and not acme.is_fresh and acme.reasons == ["stale"]
    assert fresh.eligible
    return acme


def test_a_stale_cell_withholds_the_market_figure_above_it(stale_acme_fresh_beta):
    """Seed: "Scores are derived, not stored ... so a published figure cannot drift away
    from the evidence it claims to summarize"; "The blocked cell is not dropped from
    aggregation: every family and market figure above it is withheld." A cell computed
    under inputs no longer in force is blocked as stale, and so is every figure above it
    until the recompute has run."""
    figures = snapshot_aggregates([stale_acme_fresh_beta])
    assert figures["markets"]["KR"].withheld_reason == "blocked-cell-below"
    _recompute(stale_acme_fresh_beta)
    figures = snapshot_aggregates([cell_in()])
    assert (figures["markets"]["KR"].value, figures["markets"]["KR"].withheld_reason) == (
        80.0,
        None,
    )


def test_the_published_analysis_ranks_only_what_is_published_now(stale_acme_fresh_beta):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy, showing how a ranking moves under alternative normalizations and
    aggregations". The analysis ranks the published figures: a stale cell, computed
    eligible under other inputs, is in none of its tables, nor is its market figure."""
    acme = stale_acme_fresh_beta
    tables = gate_sensitivity(cell_list())
    ranked = {(t["level"], t["market"]): t["ordering"] for t in tables}
    assert ranked[("cell", "KR")] == ["beta-agent--1.0--kr--email-calendar"]
    assert ranked[("market", "KR")] == ["beta-agent--1.0"]
    assert all(acme.cell_id not in t["published_values"] for t in tables)
    _recompute(acme)
    ranked = {(t["level"], t["market"]): t["ordering"] for t in gate_sensitivity(cell_list())}
    assert set(ranked[("cell", "KR")]) == {acme.cell_id, "beta-agent--1.0--kr--email-calendar"}


def later_version():
    return TaskVersion.objects.get(definition__slug=TASK, version="1.1.0")


def references_swapped_between_two_versions():
    """The task's current version and a later draft of it trade speed references (240 s
    and 300 s): each version's references change, the set of values does not."""
    current = TaskDefinition.objects.get(slug=TASK).current_version_id
    TaskVersion.objects.filter(pk=current).update(speed_reference_seconds=300)
    TaskVersion.objects.filter(pk=later_version().pk).update(speed_reference_seconds=240)


def references_changed(**references):
    def change():
        current = TaskDefinition.objects.get(slug=TASK).current_version_id
        TaskVersion.objects.filter(pk=current).update(**references)

    return change


def candidate_no_longer_applies():
    MarketApplicability.objects.filter(
        market__code="KR", version__definition__slug=CANDIDATE
    ).update(status=Applicability.NOT_APPLICABLE)


def task_changed(**fields):
    return lambda: TaskDefinition.objects.filter(slug=TASK).update(**fields)


def later_version_made_current():
    """The later version, which applies in no market yet, becomes the task's current one:
    the task leaves Korea's canonical set; the attempts keep their own version."""
    TaskDefinition.objects.filter(slug=TASK).update(current_version=later_version())


CHANGES = {
    "references-swapped": (references_swapped_between_two_versions, 100.0, 1),
    "speed-reference": (references_changed(speed_reference_seconds=300), 100.0, 1),
    "cost-reference": (
        references_changed(cost_reference_usd="0.025"),
        pytest.approx(80 * 0.025 / 0.035),
        1,
    ),
    "applicability": (candidate_no_longer_applies, 80.0, 0),
    "lifecycle": (task_changed(lifecycle="candidate"), None, 1),
    "task-set": (task_changed(task_set="holdout"), "not named", 0),
    "current-version": (later_version_made_current, 80.0, 0),
}


@pytest.mark.parametrize(("change", "value", "canonical_kept"), CHANGES.values(), ids=CHANGES)
def test_a_cell_reads_stale_once_an_input_it_was_computed_from_changes(
    post, staff, change, value, canonical_kept
):
    """Seed: "Scores are derived, not stored ... so a published figure cannot drift away
    from the evidence it claims to summarize"; "Speed and cost references are
    pre-registered per task version". A version's references, even traded with another
    version's, a task's applicability in the market, whether it is validated, public or
    held out, and which version is current each change the cell's figures (its task's
    audit value, or its canonical set): until it is recomputed the cell reads stale,
    never as a figure it no longer is."""
    definition = publishable_world()
    later = TaskVersion.objects.get(pk=definition.current_version_id)
    later.pk, later.version, later.speed_reference_seconds = None, "1.1.0", 300
    later.save()
    post(staff, [rerun(1), rerun(2)])
    before = cell_in()
    assert before.eligible and before.task_scores[TASK]["value"] == 80.0
    change()
    assert cell_in().reasons == ["stale"] and not cell_in().eligible
    _recompute(before)
    after = cell_in()
    assert after.is_fresh
    if value == "not named":  # a holdout task's attempts count and are never named
        assert TASK not in after.task_scores and after.eligible_runs == 2
    else:
        assert after.task_scores[TASK]["value"] == value
    assert after.tasks_defined == before.tasks_defined - 1 + canonical_kept


TRADES = {
    # (market, task) pairs: the first applies and is run in Japan, the second does not
    # apply; then they trade.
    "two-tasks-in-japan": (("JP", TASK), ("JP", CANDIDATE)),
    "japan-and-singapore": (("JP", TASK), ("SG", TASK)),
}


def applicability(market, task):
    return MarketApplicability.objects.filter(market__code=market, version__definition__slug=task)


@pytest.mark.parametrize(("applies", "does_not"), TRADES.values(), ids=TRADES)
def test_a_cell_reads_stale_once_its_task_trades_its_applicability(post, staff, applies, does_not):
    """Seed: "Scores are derived, not stored ... so a published figure cannot drift away
    from the evidence it claims to summarize"; "what share of a market's canonical tasks
    must be attempted". The task run in Japan stops applying there as another task starts
    to, or as it starts to apply in Singapore: nothing is added or removed overall, yet
    the cell's coverage changes, so the cell reads stale until recomputed."""
    publishable_world(markets=("KR",))
    applicability(*does_not).update(status=Applicability.NOT_APPLICABLE)
    post(staff, [rerun(1, market="JP"), rerun(2, market="JP")])
    before = cell_in("JP")
    assert (before.tasks_attempted, before.is_fresh) == (1, True)
    applicability(*applies).update(status=Applicability.NOT_APPLICABLE)
    applicability(*does_not).update(status=Applicability.APPLICABLE)
    assert cell_in("JP").reasons == ["stale"]
    _recompute(before)
    after = cell_in("JP")
    assert after.is_fresh and after.tasks_attempted == 0


def test_the_inputs_have_a_fingerprint_before_any_edition_exists(canonical_content):
    """Seed: "Minimum eligible runs. Not set ... The gate refuses rather than guessing a
    number." With no edition in force the gate still computes (and blocks) every cell:
    its inputs' fingerprint is taken without thresholds, and differs from one with them."""
    without = gate_inputs_fingerprint(None)
    assert len(without) == 64 and without != gate_inputs_fingerprint(edition_current())


def test_a_cell_reads_stale_once_its_version_moves_to_another_task(post, staff):
    """Seed: "The lineage chain. Edition, then suite and task contract, then country and
    local situation, then system snapshot, then attempt or run ... A figure that cannot be
    walked back along this chain is not published." A version's task is part of that
    chain: moved to another task (its form allows it), its attempts count under the other
    task, so the cell reads stale, even between two tasks with no version in force."""
    definition = publishable_world()
    version = definition.current_version_id
    TaskDefinition.objects.filter(pk=definition.pk).update(current_version=None)
    other = TaskDefinition.objects.create(
        slug="ec-moved-here", family=definition.family, position=98, lifecycle="validated"
    )
    post(staff, [rerun(1), rerun(2)])
    before = cell_in()
    assert list(before.task_scores) == [TASK]
    TaskVersion.objects.filter(pk=version).update(definition=other)
    assert cell_in().reasons == ["stale"]
    _recompute(before)
    assert list(cell_in().task_scores) == [other.slug]
