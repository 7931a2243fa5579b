"""Full publication-gate recompute over 1,000,000 attempts on PostgreSQL: seconds, memory, and
the ratio to one plain GROUP BY aggregate over the same attempts in the same run.

    MICA_DATABASE_URL=postgres://postgres@127.0.0.1:5432/mica_bench \\
        .venv/bin/python bench/gate.py [attempts]

The database named in the URL is dropped and created anew. Attempts are
generated in SQL (generate_series) across 5 snapshots × 6 markets × 10
families; a success carries a post-action readback. Targets: under 60 s, under
1 GB peak resident memory, and full recompute / plain aggregate at most 5. It
then recomputes one cell and shows that no other cell is touched.
"""

import os
import resource
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
os.environ.pop("MICA_REDIS_URL", None)

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
from django.db import connection  # noqa: E402

from governance.gate import cell_recompute, gate_recompute_all  # noqa: E402
from governance.models import GateCell  # noqa: E402
from submissions.models import DataStatus, System, SystemSnapshot, Track  # noqa: E402

GENERATE = """
INSERT INTO submissions_attempt (
    attempt_id, payload_hash, snapshot_id, task_version_id, market_id, family_id,
    attempt_class, verification, eligible, ineligible_reason, invalid_reason, outcome,
    wall_clock_seconds, model_cost_usd, tool_cost_usd, observed_cost_usd,
    critical_safety_event, safety_event_description, platform, platform_version,
    platform_snapshot_date, fallback_invoked, retry_created_duplicate,
    prohibited_state_violation, tools_used, redacted_trace_id, data_status, recorded_at)
SELECT 'bench-' || g, md5(g::text), s.id, t.id, m.id, t.family_id,
    'synthetic-fixture', 'independent-rerun', (g %% 50) <> 0,
    CASE WHEN (g %% 50) = 0 THEN 'environment fault' ELSE '' END, '',
    CASE WHEN (g %% 3) = 0 THEN 'partial-progress' ELSE 'confirmed-success' END,
    30 + (g %% 900), 0.01 + (g %% 97) / 1000.0, 0.001, 0.011 + (g %% 97) / 1000.0,
    false, '', 'bench', '1', '2026-10-30', false, false, false, '[]'::jsonb, 'trace-' || g,
    'official', now()
FROM generate_series(1, %(n)s) AS g
JOIN LATERAL (SELECT id FROM submissions_systemsnapshot ORDER BY id
              OFFSET (g %% 5) LIMIT 1) s ON true
JOIN LATERAL (SELECT id FROM markets_market ORDER BY display_order
              OFFSET (g / 5 %% 6) LIMIT 1) m ON true
JOIN LATERAL (SELECT v.id, d.family_id FROM catalogue_taskversion v
              JOIN catalogue_taskdefinition d ON d.current_version_id = v.id
              ORDER BY v.id OFFSET (g / 30 %% 100) LIMIT 1) t ON true
"""
PROVE = """
INSERT INTO submissions_evidencerecord (attempt_id, evidence_id, evidence_type, sha256)
SELECT id, 'ev-' || id, 'post-action-readback', md5(id::text) || md5(id::text)
FROM submissions_attempt WHERE outcome = 'confirmed-success'
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
            routable_models=[],
            tools=[],
            memory="none",
            track=Track.SIMULATOR,
            data_status=DataStatus.OFFICIAL,
        )
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(GENERATE, {"n": n})
        cursor.execute(PROVE)
        cursor.execute("ANALYZE submissions_attempt")
        cursor.execute("ANALYZE submissions_evidencerecord")
    print(f"generated {n:,} attempts in {time.perf_counter() - started:.1f} s")


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
