"""Mutation testing of the core rules: `make mutation [MUTATION_TARGETS="scoring gate"]`.

Each target (the scoring library, the gate, its inputs' fingerprint, the figures above
and across a cell's tasks, the ingestion, the sensitivity analysis, the record's models
and database triggers, the market services and outage workflow, the request parsers),
named by its key or its module's path, is mutated by mutmut
against its own tests, in a copy of the tracked tree under var/mutation/<target>/,
so a pure library's mutants are judged by its fast tests alone. The gate's and
the ingestion's tests run on the database MICA_DATABASE_URL names (PostgreSQL:
forked runs share its test database, made once, so they run one at a time); elsewhere
MUTATION_CHILDREN caps the forked runs (one per core by default). MUTATION_TREE=HEAD
mutates the last commit's tree instead of the working tree. Prints,
per target, how many mutants were killed and which survived.
"""

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "var" / "mutation"
KILLED = "tests/governance/test_mutants_killed.py::"
TARGETS = {
    "scoring": ("mica/scoring.py", ["tests/mica/test_scoring.py"]),
    "gate": (
        "governance/gate.py",
        [
            "tests/governance/test_gate_rules.py",
            "tests/governance/test_gate.py",
            "tests/governance/test_platform_parity.py",
            "tests/governance/test_named_mutants.py",
            "tests/governance/test_contract_completion.py",
            "tests/governance/test_mutation_killers_gate.py",
            "tests/governance/test_mutants_killed.py",
        ],
    ),
    "ingestion": (
        "submissions/ingest.py",
        [
            "tests/submissions/test_ingest.py",
            "tests/governance/test_commerce_proximity.py",
            "tests/submissions/test_platform_registration.py",
            "tests/governance/test_contract_completion.py",
            "tests/submissions/test_mutation_killers_ingest.py",
            "tests/submissions/test_commerce_currency.py",
        ],
    ),
    # The analysis's tests on ingested records take some 4 minutes a run; its mutants are
    # judged by the same rules on cells held in memory, in a second.
    "sensitivity": (
        "governance/sensitivity.py",
        [
            "tests/governance/test_mutation_killers_sensitivity.py",
            # The table's extremes, without the file's one test on the database.
            KILLED + "test_a_tables_smallest_tau_is_taken_over_every_alternative",
            KILLED + "test_a_tables_largest_shift_is_taken_over_every_alternative",
            KILLED + "test_a_table_without_movement_reports_tau_one_and_no_shift",
        ],
    ),
    "aggregates": (
        "governance/aggregates.py",
        [
            "tests/governance/test_reliability.py",
            "tests/governance/test_commerce_proximity.py",
            "tests/governance/test_gate.py",
            "tests/governance/test_gate_rules.py",
            "tests/governance/test_named_mutants.py",
            "tests/governance/test_mutation_killers_aggregates.py",
        ],
    ),
    "gate_inputs": (
        "governance/gate_inputs.py",
        [
            "tests/governance/test_gate_rules.py",
            "tests/governance/test_reliability.py",
            "tests/governance/test_named_mutants.py",
        ],
    ),
    # The record: which attempts count (COUNTED, INVALIDATED, FALLBACK_JUSTIFIED), its
    # append-only rows, and the decisions that invalidate and reverse.
    "record": (
        "submissions/models.py",
        [
            "tests/submissions/test_append_only_record.py",
            "tests/submissions/test_decisions_history.py",
            "tests/governance/test_platform_parity.py",
            "tests/governance/test_commerce_proximity.py",
        ],
    ),
    "append_only": (
        "submissions/append_only.py",
        ["tests/submissions/test_append_only_record.py"],
    ),
    "market_services": (
        "markets/services.py",
        [
            "tests/markets/test_coverage.py",
            "tests/markets/test_permissions.py",
            "tests/markets/test_platforms.py",
            "tests/submissions/test_platform_registration.py",
        ],
    ),
    "market_workflows": (
        "markets/workflows.py",
        [
            "tests/markets/test_platforms.py",
            "tests/governance/test_platform_parity.py",
            "tests/submissions/test_platform_registration.py",
        ],
    ),
    "parsers": (
        "mica/parsers.py",
        ["tests/mica/test_parsers.py", "tests/mica/test_body_bounds.py"],
    ),
}
# A target is named by its key or by its module's path, as the Makefile lists them.
BY_MODULE = {module: name for name, (module, _tests) in TARGETS.items()}
SECTION = re.compile(r"^\[tool\.mutmut\].*?(?=^\[|\Z)", re.MULTILINE | re.DOTALL)


def tracked_copy(destination):
    """The tracked tree, as a fresh clone has it, plus uncommitted edits of tracked files;
    with MUTATION_TREE set (HEAD, or any commit), that commit's tree alone: on a working
    tree shared with others, their half-done edits then stay out of the run."""
    if destination.exists():
        shutil.rmtree(destination)
    commit = os.environ.get("MUTATION_TREE")
    if commit:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(destination, filter="data")
        return
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.splitlines()
    for name in files:
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)


def configure(directory, module, tests):
    pyproject = directory / "pyproject.toml"
    section = SECTION.search(pyproject.read_text(encoding="utf-8")).group(0)
    own = section.replace(
        section[section.index("only_mutate") : section.index("\n", section.index("only_mutate"))],
        f'only_mutate = ["{module}"]',
    )
    if module != "mica/scoring.py":
        # One test database for every mutant, made once: each test rolls back its work.
        own = own.replace('"-q"]', '"-q", "--reuse-db"]')
    selection = "pytest_add_cli_args_test_selection = ["
    start = own.index(selection)
    own = own[:start] + selection + ", ".join(f'"{t}"' for t in tests) + "]\n"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(section, own), encoding="utf-8"
    )


def run(name):
    module, tests = TARGETS[name]
    directory = WORK / name
    tracked_copy(directory)
    configure(directory, module, tests)
    mutmut = Path(sys.executable).with_name("mutmut")
    # On PostgreSQL the forked runs share one test database, and a transactional test
    # flushes it: two runs at once fail each other's tests, and a mutant no test catches
    # is counted as killed. They run one at a time there.
    shared = module != "mica/scoring.py" and os.environ.get("MICA_DATABASE_URL")
    # MUTATION_CHILDREN caps the forked runs on a shared machine (never above one on
    # PostgreSQL).
    children = "1" if shared else os.environ.get("MUTATION_CHILDREN", str(os.cpu_count() or 1))
    # On SQLite each forked run copies a test database the first one made and loaded
    # (tests/conftest.py), instead of migrating one of its own: 5 seconds a run, not 20.
    template = directory / "test-template.sqlite3"
    template.unlink(missing_ok=True)
    subprocess.run(
        [str(mutmut), "run", "--max-children", children],
        env={**os.environ, "MICA_TEST_DB_TEMPLATE": str(template)},
        cwd=directory,
        stdout=subprocess.DEVNULL,
        check=False,
    )
    results = subprocess.run(
        [str(mutmut), "results", "--all", "true"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    statuses = re.findall(r"^\s*(\S+): (.+)$", results, re.MULTILINE)
    survived = sorted(mutant for mutant, status in statuses if status == "survived")
    others = [s for _m, s in statuses if s not in ("killed", "survived")]
    killed = sum(1 for _m, s in statuses if s == "killed")
    print(f"{name} ({module}): {len(statuses)} mutants, {killed} killed, {len(survived)} survived")
    if others:
        print(f"  other outcomes: {sorted(set(others))} × {len(others)}")
    for mutant in survived:
        print(f"  survived: {mutant}")
    return not survived


def main(names):
    passed = [run(BY_MODULE.get(name, name)) for name in names or TARGETS]
    return 0 if all(passed) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
