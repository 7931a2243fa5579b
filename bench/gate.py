"""Full publication-gate recompute over 1,000,000 attempts on PostgreSQL: seconds, memory, and
the ratio to one plain GROUP BY aggregate over the same attempts in the same run.

    MICA_DATABASE_URL=postgres://postgres@127.0.0.1:5432/mica_bench \\
        .venv/bin/python bench/gate.py [attempts]

The database named in the URL is dropped and created anew (the var directory, for the
keys the settings make, is a temporary one unless MICA_VAR_DIR names one). Attempts are
generated in SQL (generate_series) as ingestion would have stored them: each of 5
snapshots runs every current task version in every market where it applies, on that
market and family's pre-registered primary platform (snapshot date after the sets were
frozen), with one model invocation the snapshot declares; a success carries a
post-action readback, and an idempotency record where the task's contract declares
one. Targets: under 60 s, under 1 GB peak resident memory, and full recompute / plain
aggregate at most 5. It then recomputes one cell and shows that no other cell is touched.

Smoke size (CI, a few seconds after the database is made): `bench/gate.py 20000`.
"""

import datetime
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
os.environ.pop("MICA_REDIS_URL", None)
# The keys the settings write go to a folder of the bench's, never the work tree's var/.
os.environ.setdefault("MICA_VAR_DIR", tempfile.mkdtemp(prefix="mica-bench-gate-"))

import psycopg  # noqa: E402

URL = os.environ.get("MICA_DATABASE_URL", "")
if not URL.startswith("postgres"):
    sys.exit("Set MICA_DATABASE_URL to a PostgreSQL database the benchmark may recreate.")


def recreate_database():
    parts = urlsplit(URL)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


recreate_database()

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import F  # noqa: E402

from governance.gate import cell_recompute, gate_recompute_all  # noqa: E402
from governance.models import GateCell  # noqa: E402
from submissions.models import DataStatus, System, SystemSnapshot, Track  # noqa: E402

# What each attempt runs: a current task version, in a market where it applies, on the
# market and family's pre-registered primary platform (filled by targets_store()).
TARGETS = """
CREATE TEMPORARY TABLE bench_target (
    n integer PRIMARY KEY, task_version_id bigint, family_id bigint, market_id bigint,
    platform_id bigint, platform text, idempotency boolean)
"""
GENERATE = """
INSERT INTO submissions_attempt (
    attempt_id, payload_hash, snapshot_id, task_version_id, market_id, family_id,
    attempt_class, verification, eligible, ineligible_reason, invalid_reason, outcome,
    wall_clock_seconds, model_cost_usd, tool_cost_usd, observed_cost_usd,
    critical_safety_event, safety_event_description, platform, representative_platform_id,
    platform_version, platform_snapshot_date, fallback_invoked, memory_exercised,
    commerce_currency, reference_evidence_id, retry_created_duplicate,
    prohibited_state_violation, tools_used, redacted_trace_id, data_status, recorded_at)
SELECT 'bench-' || g, md5(g::text) || md5(g::text), s.id, t.task_version_id, t.market_id,
    t.family_id, 'synthetic-fixture', 'independent-rerun', (g %% 50) <> 0,
    CASE WHEN (g %% 50) = 0 THEN 'environment fault' ELSE '' END, '',
    CASE WHEN (g %% 3) = 0 THEN 'partial-progress' ELSE 'confirmed-success' END,
    30 + (g %% 900), 0.01 + (g %% 97) / 1000.0, 0.001, 0.011 + (g %% 97) / 1000.0,
    false, '', t.platform, t.platform_id, '1', %(snapshot_date)s, false, NULL,
    '', '', false, false, '[]'::jsonb, 'trace-' || g, 'official', now()
FROM generate_series(1, %(n)s) AS g
JOIN LATERAL (SELECT id FROM submissions_systemsnapshot ORDER BY id
              OFFSET (g %% 5) LIMIT 1) s ON true
JOIN bench_target t ON t.n = (g / 5) %% %(targets)s
"""
# One invocation an attempt, of the model its snapshot declares, costing the model cost.
INVOKE = """
INSERT INTO submissions_modelinvocation (
    attempt_id, "order", provider, model, model_version, purpose, input_tokens,
    output_tokens, latency_seconds, cost_usd)
SELECT id, 1, 'bench', 'model', '1', 'plan', 1000, 200, 1.0, model_cost_usd
FROM submissions_attempt
"""
PROVE = """
INSERT INTO submissions_evidencerecord (attempt_id, evidence_id, evidence_type, sha256)
SELECT id, 'ev-' || id, 'post-action-readback', md5(id::text) || md5(id::text)
FROM submissions_attempt WHERE outcome = 'confirmed-success'
"""
# A success of a task whose contract declares an idempotency requirement keeps the record.
GUARD = """
INSERT INTO submissions_evidencerecord (attempt_id, evidence_id, evidence_type, sha256)
SELECT a.id, 'idem-' || a.id, 'retry-idempotency-record', md5('idem' || a.id)
    || md5(a.id::text)
FROM submissions_attempt a JOIN bench_target t
    ON t.task_version_id = a.task_version_id AND t.market_id = a.market_id
WHERE a.outcome = 'confirmed-success' AND t.idempotency
"""
# The same attempts, counted the plainest way: one pass, no rule of the method.
PLAIN_AGGREGATE = """
SELECT snapshot_id, market_id, family_id, count(*),
       count(*) FILTER (WHERE eligible AND outcome = 'confirmed-success'),
       sum(observed_cost_usd) FILTER (WHERE eligible),
       count(DISTINCT task_version_id), bool_or(critical_safety_event)
FROM submissions_attempt GROUP BY snapshot_id, market_id, family_id
"""


def prepare(n):
    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    for index in range(5):
        system = System.objects.create(
            slug=f"bench-{index}", name=f"Bench {index}", operator="benchmark"
        )
        SystemSnapshot.objects.create(
            system=system,
            version="1",
            snapshot_date="2026-11-01",
            orchestrator="bench",
            routable_models=["bench/model"],
            tools=[],
            memory="none",
            track=Track.SIMULATOR,
            data_status=DataStatus.OFFICIAL,
        )
    started = time.perf_counter()
    with connection.cursor() as cursor:
        count, snapshot_date = targets_store(cursor)
        # One transaction, as ingestion records them: the record takes an attempt's
        # invocations and evidence only in the transaction that records the attempt.
        with transaction.atomic():
            cursor.execute(GENERATE, {"n": n, "targets": count, "snapshot_date": snapshot_date})
            cursor.execute(INVOKE)
            cursor.execute(PROVE)
            cursor.execute(GUARD)
        for table in ("attempt", "modelinvocation", "evidencerecord"):
            cursor.execute(f"ANALYZE submissions_{table}")
    print(f"generated {n:,} attempts in {time.perf_counter() - started:.1f} s")


def targets_store(cursor):
    """Fill bench_target with every (current version, market where it applies) that has a
    pre-registered primary platform; (how many, a platform snapshot date after every set
    was frozen, as ingestion requires)."""
    from catalogue.models import APPLYING, MarketApplicability, TaskVersion, idempotency_declared
    from markets.selectors import platforms_in_force

    primaries = {
        (p.registration.market_edition.market_id, p.registration.task_family): p
        for p in platforms_in_force().filter(rank=1).select_related("registration")
    }
    guarded = set(TaskVersion.objects.filter(idempotency_declared()).values_list("pk", flat=True))
    applying = (
        MarketApplicability.objects.filter(
            version__definition__current_version=F("version"), status__in=APPLYING
        )
        .select_related("version__definition__family")
        .order_by("version__definition__family__position", "version__definition__slug", "market")
    )
    rows = []
    for a in applying:
        primary = primaries.get((a.market_id, a.version.definition.family.slug))
        if primary is not None:
            version = a.version
            rows.append(
                (
                    len(rows),
                    version.pk,
                    version.definition.family_id,
                    a.market_id,
                    primary.pk,
                    primary.name_en,
                    version.pk in guarded,
                )
            )
    registered = max(p.registration.registered_at for p in primaries.values())
    cursor.execute(TARGETS)
    cursor.executemany("INSERT INTO bench_target VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    return len(rows), registered.date() + datetime.timedelta(days=2)


def plain_aggregate_seconds():
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(PLAIN_AGGREGATE)
        cursor.fetchall()
    return time.perf_counter() - started


def main(n):
    prepare(n)
    plain = plain_aggregate_seconds()
    started = time.perf_counter()
    cells = gate_recompute_all()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"full gate recompute: {cells} cells from {n:,} attempts in {seconds:.1f} s (target < 60 s)"
    )
    print(f"peak resident memory: {peak_mb:.0f} MB (target < 1024 MB)")
    print(
        f"plain GROUP BY aggregate over the same attempts: {plain:.2f} s; "
        f"full recompute / plain aggregate = {seconds / plain:.1f} (target <= 5)"
    )
    one = GateCell.objects.first()
    before = {c.pk: c.computed_at for c in GateCell.objects.all()}
    started = time.perf_counter()
    cell_recompute(one.snapshot_id, one.market_id, one.family_id)
    changed = [c.pk for c in GateCell.objects.all() if c.computed_at != before[c.pk]]
    print(
        f"one cell recomputed in {time.perf_counter() - started:.2f} s; cells touched: "
        f"{len(changed)} of {len(before)}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
