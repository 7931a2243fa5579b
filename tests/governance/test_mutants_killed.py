"""Named one-line mutants that once survived the suite (issue 44, item 8), each killed here
at the line that states its rule; every test passes as the code stands and fails under its
mutant:

- p95 taken at q = 0.9 (governance/gate.py, `_latency_figures`): a cell's p95 latency is
  the 95th percentile of its successes' seconds;
- a sensitivity table's smallest tau taken from its last alternative, and its largest
  shift taken from its last alternative (governance/sensitivity.py, `_table`): both are
  taken over every alternative, and the extreme one need not come last.

`make mutation` runs this file against the gate and the sensitivity analysis
(tools/mutation.py).
"""

import json

import pytest

from governance.selectors import cell_list
from governance.sensitivity import _table, alternative_code
from mica import scoring
from tests.factories import api_auth, publishable_world
from tests.factories import independent_rerun as rerun

TASK_LEVEL = ("cell", "KR", "email-calendar")


@pytest.mark.vendor  # recording the attempts reaches the record's triggers
@pytest.mark.django_db
def test_p95_is_the_95th_percentile_of_the_successes_seconds(
    client, staff, canonical_content, django_capture_on_commit_callbacks
):
    """Seed: "uses wall-clock seconds from successful eligible runs only, reported as p50
    and p95."

    Two successes in 100 s and 300 s: by R-7, p95 is 100 + 0.95 × 200 = 290 s (q = 0.9
    would say 280 s) and p50 is 200 s."""
    publishable_world()
    payloads = [rerun(1, wall_clock_seconds=100.0), rerun(2, wall_clock_seconds=300.0)]
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            "/api/v1/attempts/",
            json.dumps(payloads),
            content_type="application/json",
            **api_auth(staff),
        )
    assert answer.status_code == 201, answer.json()
    cell = cell_list().get()
    assert cell.eligible_runs == 2
    assert cell.p50_seconds == pytest.approx(200.0)
    assert cell.p95_seconds == pytest.approx(290.0)


BASELINE_VALUES = {"acme": 3.0, "beta": 2.0, "gamma": 1.0}
REVERSED = {"acme": 1.0, "beta": 2.0, "gamma": 3.0}


# The one reversing alternative sits inside the list, never last: a table's figure taken
# from its last alternative alone would miss it.
REVERSING_INSIDE = [
    scoring.alternatives()[len(scoring.alternatives()) // 2],
    scoring.alternatives()[1],
    scoring.alternatives()[-2],
]


def table_with_one_reversal(reversing):
    """A table whose every alternative keeps the published ordering but `reversing`, which
    reverses it whole: tau -1 and a shift of two places there, tau 1 and no shift
    elsewhere."""
    by_alternative = {
        alternative: dict(REVERSED if alternative == reversing else BASELINE_VALUES)
        for alternative in scoring.alternatives()
    }
    return _table(TASK_LEVEL, by_alternative)


@pytest.mark.parametrize("reversing", REVERSING_INSIDE, ids=alternative_code)
def test_a_tables_smallest_tau_is_taken_over_every_alternative(reversing):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy, showing how a ranking moves under alternative normalizations and
    aggregations, and task-level results are published so the analysis can be redone
    independently."

    The one alternative that reverses the ranking is neither the first nor the last: the
    table's smallest tau is its -1, not the last alternative's 1."""
    table = table_with_one_reversal(reversing)
    taus = {m["alternative"]: m["kendall_tau"] for m in table["alternatives"]}
    assert taus[alternative_code(reversing)] == pytest.approx(-1.0)
    assert taus[alternative_code(scoring.alternatives()[-1])] == pytest.approx(1.0)
    assert table["smallest_kendall_tau"] == pytest.approx(-1.0)


@pytest.mark.parametrize("reversing", REVERSING_INSIDE, ids=alternative_code)
def test_a_tables_largest_shift_is_taken_over_every_alternative(reversing):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy, showing how a ranking moves under alternative normalizations and
    aggregations, and task-level results are published so the analysis can be redone
    independently."

    Reversing three entries moves the first and the last two places each; the last
    alternative moves nothing, and the table's largest shift is still two."""
    table = table_with_one_reversal(reversing)
    shifts = {m["alternative"]: m["largest_shift"] for m in table["alternatives"]}
    assert shifts[alternative_code(reversing)] == 2
    assert shifts[alternative_code(scoring.alternatives()[-1])] == 0
    assert table["largest_shift"] == 2


def test_a_table_without_movement_reports_tau_one_and_no_shift():
    """The same table with no alternative moving anything: the extremes are the plain
    ones, so the tests above fail only for the reason they name."""
    by_alternative = {alt: dict(BASELINE_VALUES) for alt in scoring.alternatives()}
    table = _table(TASK_LEVEL, by_alternative)
    assert table["smallest_kendall_tau"] == pytest.approx(1.0)
    assert table["largest_shift"] == 0
