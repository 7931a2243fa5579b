"""mica_verify recomputes every sensitivity table of the export set (issue 41, item 6): each
alternative's values, ordering, shared ranks, rank shifts and Kendall's tau-b, and each
table's largest shift and smallest tau, run as its users run it.

Seed: "No official figure may be published without a sensitivity analysis over the
scoring policy, showing how a ranking moves under alternative normalizations and
aggregations, and task-level results are published so the analysis can be redone
independently."

Three cells of one market and family pass the gate: acme's seeded reruns (audit figure
about 59, three successes in four), beta's at 300 s and USD 0.035 (80, every run a
success) and gamma's at 200 s and USD 0.100 (50, every run a success). Under accuracy
alone beta and gamma tie at 100: a tie, which tau-b counts neither way, not a reversal.
In the governance tests' world of every market, the market and cross-market family tables
recompute too.
"""

import json
from decimal import Decimal

import pytest

from tests import factories
from tests.factories import SnapshotFactory, SystemFactory, attempts_post, independent_rerun
from tests.governance.test_sensitivity import (  # noqa: F401 - fixtures, used by name
    codes,
    three_systems,
    world,
)
from tests.mica import test_mica_verify
from tests.mica.test_mica_verify import (  # noqa: F401 - fixtures, used by name
    export_folder,
    mismatches,
    rehash,
    run_verifier,
    signing_key_file,
)

pytestmark = [pytest.mark.vendor, pytest.mark.django_db(transaction=False)]

AREA = "sensitivity tables"
ACCURACY_ONLY = "reference-ratio/accuracy-only"
# (seconds, USD) of each rival's two runs, against references of 240 s and USD 0.050.
RIVALS = {"beta-agent": (300.0, "0.035"), "gamma-agent": (200.0, "0.100")}


def rival_runs(system):
    seconds, usd = RIVALS[system]
    SnapshotFactory(system=SystemFactory(slug=system, name=system.title()), version="1.0")
    runs = []
    for n in (1, 2):
        payload = independent_rerun(n, wall_clock_seconds=seconds)
        # The invocations' USD 0.030 stay the model cost; the tools take the rest.
        payload.update(
            attempt_id=f"{system}-kr-{n:03d}",
            snapshot={"system": system, "version": "1.0"},
            tool_cost_usd=f"{Decimal(usd) - Decimal('0.030'):.9f}",
            observed_cost_usd=f"{Decimal(usd):.9f}",
        )
        runs.append(payload)
    return runs


@pytest.fixture
def with_rivals(monkeypatch):
    """export_folder (test_mica_verify) seeds the attempts and exports them; the rivals'
    runs are recorded in between, by the seeding it calls."""

    def seeded_with_rivals(client, staff, operator):
        factories.seeded_attempts(client, staff, operator)
        rivals = [*rival_runs("beta-agent"), *rival_runs("gamma-agent")]
        response = attempts_post(client, staff, rivals)
        assert response.status_code == 201, response.content

    monkeypatch.setattr(test_mica_verify, "seeded_attempts", seeded_with_rivals)


@pytest.fixture
def folder(with_rivals, export_folder):  # noqa: F811 - the fixture imported above
    """The published export set, the rivals' cells in it."""
    return export_folder


@pytest.fixture
def every_market_folder(three_systems, without_seeding, export_folder):  # noqa: F811
    """The three systems of the governance tests, acme and beta in every market, so market
    and cross-market family figures are published and ranked too (tests/governance/
    test_sensitivity.py); export_folder's own seeding is left out."""
    return export_folder


@pytest.fixture
def without_seeding(monkeypatch):
    monkeypatch.setattr(test_mica_verify, "seeded_attempts", lambda *_arguments: None)


def gate_of(folder):
    return json.loads((folder / "mica-gate.json").read_text())


def cell_table(gate):
    (table,) = [t for t in gate["sensitivity"]["tables"] if t["level"] == "cell"]
    return table, f"cell {table['market']} {table['family']}"


def alternative(table, code):
    (found,) = [m for m in table["alternatives"] if m["alternative"] == code]
    return found


def tampered(folder, change):
    """Apply `change` to the published gate document and re-sign its manifest with the
    site's key, as someone holding the key could; what the verifier names."""
    gate = gate_of(folder)
    change(gate)
    (folder / "mica-gate.json").write_text(json.dumps(gate, ensure_ascii=False, indent=1))
    rehash(folder, "mica-gate.json")
    found = mismatches(folder)
    # Only the figure is wrong: the files and signature check, and the log does not
    # record the re-signed manifest.
    assert {area for area, _name in found} == {AREA, "publication log"}, found
    return found


def test_every_sensitivity_table_recomputes_and_a_tie_is_not_a_reversal(folder):
    result = run_verifier(folder, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, report["mismatches"]
    table, _name = cell_table(gate_of(folder))
    assert len(table["published_values"]) == 3
    # Every alternative's eight figures and the table's own, checked by name.
    assert report["checked"][AREA] >= 2 + 7 + len(table["alternatives"]) * 8
    tie = alternative(table, ACCURACY_ONLY)
    beta, gamma, acme = (
        next(cell for cell in tie["values"] if cell.startswith(f"{system}--"))
        for system in ("beta-agent", "gamma-agent", "acme-agent")
    )
    assert tie["values"][beta] == tie["values"][gamma] == 100.0
    assert tie["ranks"][beta] == tie["ranks"][gamma] == 1 and tie["ranks"][acme] == 3
    # beta over acme agrees, acme over gamma is reversed, beta with gamma is tied: tau-b
    # 0 over sqrt(3 × 2), where counting the tie as a reversal would give less.
    assert tie["kendall_tau"] == 0.0


def test_a_changed_kendall_tau_names_its_table(folder):
    def change(gate):
        alternative(cell_table(gate)[0], ACCURACY_ONLY)["kendall_tau"] = -1 / 3

    found = tampered(folder, change)
    name = cell_table(gate_of(folder))[1]
    assert (AREA, f"{name} {ACCURACY_ONLY} kendall_tau") in found


def test_a_changed_rank_shift_names_its_table(folder):
    def change(gate):
        shifts = alternative(cell_table(gate)[0], ACCURACY_ONLY)["rank_shifts"]
        first = sorted(shifts)[0]
        shifts[first] += 1

    found = tampered(folder, change)
    name = cell_table(gate_of(folder))[1]
    assert (AREA, f"{name} {ACCURACY_ONLY} rank_shifts") in found


def test_a_changed_largest_shift_names_its_table(folder):
    def change(gate):
        cell_table(gate)[0]["largest_shift"] += 1

    found = tampered(folder, change)
    name = cell_table(gate_of(folder))[1]
    assert (AREA, f"{name} largest_shift") in found


def test_every_market_and_family_table_recomputes_and_a_changed_one_is_named(
    every_market_folder,
    codes,  # noqa: F811
):
    folder = every_market_folder
    result = run_verifier(folder, "--json")
    assert result.returncode == 0, json.loads(result.stdout)["mismatches"]
    levels = [t["level"] for t in gate_of(folder)["sensitivity"]["tables"]]
    assert levels.count("market") == len(codes) and levels.count("family") == 1

    def change(gate):
        (family,) = [t for t in gate["sensitivity"]["tables"] if t["level"] == "family"]
        alternative(family, "reference-ratio/without-cost")["kendall_tau"] = 1.0

    found = tampered(folder, change)
    assert (AREA, "family email-calendar reference-ratio/without-cost kendall_tau") in found


def test_a_reading_no_analysis_can_be_redone_from_is_named_not_a_crash():
    """A published component of 0 seconds (the cell's components check names it too)
    leaves the tables unrecomputable: the verifier says so and carries on reporting."""
    from mica_verify.report import Report
    from mica_verify.sensitivity import sensitivity_check

    cells = [
        {
            "cell": f"{system}--1--kr--email-calendar",
            "system": system,
            "snapshot_version": "1",
            "market": "KR",
            "family": "email-calendar",
            "components": {"t": [[1.0, seconds, 0.035, 240.0, 0.05]]},
            "task_scores": {"t": {"value": 80.0}},
        }
        for system, seconds in (("acme-agent", 0.0), ("beta-agent", 300.0))
    ]
    mine = {"eligible": True, "figures": {"critical_safety_events": 0}}
    recomputed = {
        "gate": {"sensitivity": {"tables": []}},
        "cells": cells,
        "recomputed": {cell["cell"]: mine for cell in cells},
        "canonical": {},
        "markets": ["KR"],
    }
    report = Report("hand-made")
    sensitivity_check(recomputed, report)
    (failed,) = [m for m in report.mismatches if m["name"] == "tables"]
    assert failed["area"] == AREA and "ZeroDivisionError" in failed["detail"]
