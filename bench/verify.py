"""`python -m mica_verify` over the export set of a 10,000-task world: checks and seconds.

    .venv/bin/python bench/verify.py [--tasks 10000] [--systems 12] [--runs 2] [--smoke]
                                     [--keep FOLDER]

On a fresh embedded database (SQLite) in a temporary folder: the canonical content and a
generated catalogue making up --tasks public tasks (catalogue.synthetic, as bench/pages.py
and bench/exports.py grow theirs); one canonical task made publishable in every market
(thresholds set, the task validated, its references registered, its local reviews
approved); and --systems snapshots, each recording --runs independent reruns of it in
every market, their speeds, costs and outcomes apart, some alike so that the sensitivity
tables hold ties (made with the test suite's builders, tests/factories.py, as the tests
make a publishable world). The export set is then built and published as the worker publishes it
(the portal's own pre-publication recomputation included), the publication log and the
key are kept beside it as `--download` keeps them, and `python -m mica_verify FOLDER
--json` runs on the folder in a process of its own, as a reader runs it.

Prints the world (tasks, cells, sensitivity tables, files), the checks per area, the
verdict and the verifier's seconds (target: at most 60 s at 10,000 tasks on a 2-core
machine). The figures are printed, never judged: the exit status says only whether the
bench and the verifier ran to the end and every check passed.

--keep copies the checked folder to FOLDER, to run or profile the verifier on it again.
--smoke is the size CI runs (bench/smoke): 200 tasks, 3 systems. With BENCH_PREPARED
(bench/prepared.py) the database starts as a copy of a migrated and loaded one.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from prepared import prepared_copy

ROOT = Path(__file__).resolve().parents[1]
TASK = "ec-reschedule-three-party"
TARGET_SECONDS = 60
CANONICAL_TASKS = 100


def _django(var_dir):
    for name in [name for name in os.environ if name.startswith("MICA_")]:
        del os.environ[name]
    os.environ.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        MICA_VAR_DIR=str(var_dir),
        MICA_JOBS_EAGER="1",
        MICA_LOG_LEVEL="ERROR",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings

    # The local reviews' notices are kept in memory, not printed among the figures.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def catalogue(tasks):
    from django.core.management import call_command

    from catalogue.selectors import task_public_list
    from catalogue.synthetic import synthetic_catalogue_create

    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))  # noqa: SIM115
    synthetic_catalogue_create(max(0, tasks - task_public_list().count()))
    return task_public_list().count()


def run_payload(system, code, n, number):
    """A rerun of system `number` in market `code`: its speed, cost and outcome follow the
    system's number, so some systems are alike (ties) and some fail a run."""
    from decimal import Decimal

    from tests.factories import independent_rerun

    usd = Decimal("0.035") + Decimal("0.010") * (number % 4)
    payload = independent_rerun(n, market=code, wall_clock_seconds=150.0 + 25.0 * (number % 7))
    failed = (number + n) % 5 == 0
    payload.update(
        attempt_id=f"{system}-{code.lower()}-{n:03d}",
        snapshot={"system": system, "version": "1.0"},
        # The invocations' USD 0.030 stay the model cost; the tools take the rest.
        tool_cost_usd=f"{usd - Decimal('0.030'):.9f}",
        observed_cost_usd=f"{usd:.9f}",
        **({"outcome": "recoverable-failure", "accuracy": 0} if failed else {}),
    )
    return payload


def attempts(systems, runs):
    """Every system's reruns in every market, one batch a system; the attempts recorded."""
    from markets.selectors import market_list
    from submissions.ingest import attempts_ingest_batch, recording_grant
    from tests.factories import SnapshotFactory, StaffFactory, SystemFactory, publishable_world

    codes = [market.code for market in market_list()]
    # Coverage waived: the generated tasks are candidates, which no rerun may count on, so
    # a cell of one task covers a sliver of its family and would be withheld for it.
    publishable_world(markets=codes, min_coverage=0)
    staff = StaffFactory(username="bench-staff")
    recording_grant(staff)
    recorded = 0
    for number in range(1, systems + 1):
        system = f"bench-agent-{number:02d}"
        SnapshotFactory(system=SystemFactory(slug=system, name=system.title()), version="1.0")
        payloads = [
            run_payload(system, code, n, number) for code in codes for n in range(1, runs + 1)
        ]
        recorded += len(attempts_ingest_batch(payloads=payloads, actor=staff))
    return recorded


def export_folder(folder):
    """The published set, with the log and the key, as `--download` leaves it."""
    from django.conf import settings
    from django.test import Client

    from mica.exports.publish import exports_build_and_publish

    started = time.perf_counter()
    manifest = exports_build_and_publish()
    built = time.perf_counter() - started
    shutil.copytree(Path(settings.EXPORT_DIR) / "current", folder)
    client = Client()
    (folder / "log.json").write_bytes(b"".join(client.get("/transparency/log.json")))
    (folder / "key.pem").write_bytes(client.get("/transparency/key").content)
    return manifest, built


def verify(folder):
    """(report, seconds) of `python -m mica_verify FOLDER --json` in its own process."""
    environment = {"PYTHONPATH": str(ROOT / "mica_verify"), "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mica_verify", str(folder), "--json"],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    seconds = time.perf_counter() - started
    if not result.stdout:
        sys.exit(f"mica_verify printed no report:\n{result.stderr}")
    return json.loads(result.stdout), seconds


def world_line(folder, tasks, recorded, manifest):
    gate = json.loads((folder / "mica-gate.json").read_text(encoding="utf-8"))
    tables = gate["sensitivity"]["tables"]
    size = sum(entry["size"] for entry in manifest["files"]) / 1e6
    return (
        f"{tasks:,} tasks, {recorded:,} attempts, {len(gate['cells'])} cells, "
        f"{len(tables)} sensitivity tables, {len(manifest['files'])} files ({size:.1f} MB)"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000, help="public tasks in all")
    parser.add_argument("--systems", type=int, default=12, help="snapshots with reruns")
    parser.add_argument("--runs", type=int, default=2, help="reruns per system and market")
    parser.add_argument("--smoke", action="store_true", help="200 tasks, 3 systems")
    parser.add_argument("--keep", type=Path, help="copy the checked folder here")
    args = parser.parse_args()
    if args.smoke:
        args.tasks, args.systems = 200, 3
    work = Path(tempfile.mkdtemp(prefix="mica-bench-verify-"))
    try:
        prepared_copy(work / "var")
        _django(work / "var")
        tasks = catalogue(args.tasks)
        recorded = attempts(args.systems, args.runs)
        manifest, built = export_folder(work / "set")
        print(world_line(work / "set", tasks, recorded, manifest))
        print(f"export set built and published in {built:.1f} s")
        report, seconds = verify(work / "set")
        if args.keep:
            shutil.copytree(work / "set", args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for area, count in report["checked"].items():
        print(f"  checked {count:8,d}  {area}")
    for mismatch in report["mismatches"][:10]:
        print(f"MISMATCH {mismatch['area']}: {mismatch['name']}: {mismatch['detail']}")
    checks = sum(report["checked"].values())
    verdict = "every check passed" if report["passed"] else f"{len(report['mismatches'])} failed"
    print(
        f"mica_verify: {checks:,} checks in {seconds:.1f} s ({verdict}; "
        f"target: at most {TARGET_SECONDS} s at 10,000 tasks)"
    )
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
