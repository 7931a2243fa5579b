"""A clearly labelled synthetic run set: several systems, all six markets, never eligible.

Everything it writes carries data status "demo", so the gate blocks it and the
live figures never count it as a registered system or a run cell.
"""

import hashlib
import random
from decimal import Decimal

from django.db import transaction

from catalogue.selectors import task_filter, task_public_list
from markets.selectors import market_list, platform_primary
from submissions.ingest import COMMERCE_FAMILIES, attempts_ingest_batch
from submissions.models import DataStatus, System, SystemSnapshot, Track

DEMO_SYSTEMS = [
    ("demo-harbor", "Demo Harbor Agent", "Synthetic operator A"),
    ("demo-lantern", "Demo Lantern Assistant", "Synthetic operator B"),
    ("demo-meridian", "Demo Meridian Concierge", "Synthetic operator C"),
]
FAMILIES = ["email-calendar", "shopping-delivery"]
MODELS = ["synthetic/planner-s", "synthetic/worker-m"]
OUTCOMES = [
    "confirmed-success",
    "confirmed-success",
    "recoverable-failure",
    "partial-progress",
    "unverified-completion",
]


def _snapshot(slug, name, operator):
    system, _ = System.objects.update_or_create(
        slug=slug, defaults={"name": name, "operator": operator}
    )
    snapshot, _ = SystemSnapshot.objects.get_or_create(
        system=system,
        version="demo-1",
        defaults={
            "snapshot_date": "2026-11-01",
            "orchestrator": "synthetic orchestrator",
            "routable_models": MODELS,
            "tools": ["synthetic-browser"],
            "memory": "Session memory only (synthetic).",
            "track": Track.SIMULATOR,
            "data_status": DataStatus.DEMO,
            "market_capability": {m.code: "synthetic fixture only" for m in market_list()},
        },
    )
    return snapshot


# After the day the shipped platform sets were pre-registered (markets/content,
# registered_on): a run's platform is fixed before the run.
PLATFORM_SNAPSHOT_DATE = "2026-12-01"


# A readback proves the final state; the idempotency record is what a contract declaring
# an idempotency requirement asks of a success, and it is kept on every demo run alike.
DEMO_EVIDENCE = ["post-action-readback", "retry-idempotency-record"]


def _evidence(attempt_id, kind):
    evidence_id = f"{kind[:5]}-{attempt_id}"[:64]
    return {
        "evidence_id": evidence_id,
        "evidence_type": kind,
        "sha256": hashlib.sha256(evidence_id.encode()).hexdigest(),
    }


# A synthetic lowest valid total per market currency, about the price of a tin of formula.
DEMO_REFERENCE_TOTALS = {
    "KRW": Decimal("22900"),
    "JPY": Decimal("2480"),
    "SGD": Decimal("24.90"),
    "TWD": Decimal("620"),
    "AED": Decimal("79"),
    "THB": Decimal("690"),
}
SEARCH_EVIDENCE = "locale-formatted-artifact"


def _commerce(attempt, market):
    """A commerce task's totals: the chosen total at or above the lowest valid total (a
    success chose a valid offer, which the reference search saw), with the search among the
    attempt's evidence. Its own generator, so the other runs stay as they were."""
    rng = random.Random(attempt["attempt_id"])
    reference = DEMO_REFERENCE_TOTALS.get(market.currency_code, Decimal("100"))
    premium = Decimal(rng.randint(0, 120)) / Decimal(1000)
    search = _evidence(attempt["attempt_id"], SEARCH_EVIDENCE)
    attempt["evidence"].append(search)
    attempt["commerce"] = {
        "currency": market.currency_code,
        "chosen_total": str((reference * (1 + premium)).quantize(reference)),
        "reference_total": str(reference),
        "reference_observed_at": f"{PLATFORM_SNAPSHOT_DATE}T09:00:00+00:00",
        "reference_evidence_id": search["evidence_id"],
    }
    return attempt


def _attempt(rng, snapshot, task, market, index, platform):
    outcome = rng.choice(OUTCOMES)
    costs = [Decimal(rng.randint(1000, 90000)) / Decimal(10**6) for _ in MODELS]
    seconds = round(rng.uniform(60, 800), 1)
    attempt_id = f"demo-{snapshot.system.slug}-{market.code}-{task.slug}-{index}".lower()[:64]
    return {
        "attempt_id": attempt_id,
        "snapshot": {"system": snapshot.system.slug, "version": snapshot.version},
        "task": task.slug,
        "task_version": task.current_version.version,
        "market": market.code,
        "outcome": outcome,
        "critical_safety_event": False,
        "prohibited_state_violation": False,
        "retry_created_duplicate": False,
        # The set's primary: a synthetic replica of it, named as the set names it.
        "platform": platform,
        "platform_version": "demo-1",
        "platform_snapshot_date": PLATFORM_SNAPSHOT_DATE,
        "fallback_invoked": False,
        "wall_clock_seconds": seconds,
        "model_cost_usd": str(sum(costs)),
        "tool_cost_usd": "0.002",
        "observed_cost_usd": str(sum(costs) + Decimal("0.002")),
        "verification": "independent-rerun",
        "tools_used": ["synthetic-browser"],
        "redacted_trace_id": hashlib.sha256(attempt_id.encode()).hexdigest()[:32],
        "invocations": [
            {
                "order": n + 1,
                "provider": "synthetic",
                "model": model.split("/")[1],
                "model_version": "1",
                "purpose": "plan" if n == 0 else "act",
                "input_tokens": rng.randint(500, 4000),
                "output_tokens": rng.randint(50, 800),
                "latency_seconds": round(seconds / 4, 1),
                "cost_usd": str(cost),
            }
            for n, (model, cost) in enumerate(zip(MODELS, costs, strict=True))
        ],
        "evidence": [_evidence(attempt_id, kind) for kind in DEMO_EVIDENCE],
    }


def demo_payloads():
    rng = random.Random("mica-demo-runs")
    payloads = []
    for slug, name, operator in DEMO_SYSTEMS:
        snapshot = _snapshot(slug, name, operator)
        for market in market_list():
            for family in FAMILIES:
                primary = platform_primary(market.code, family)
                # No set pre-registered: ingestion refuses the runs by name, and says why.
                platform = primary.name_en if primary else f"{market.code} {family}"
                tasks = task_filter(task_public_list(), family=family, market=market.code)[:3]
                for index, task in enumerate(tasks):
                    attempt = _attempt(rng, snapshot, task, market, index, platform)
                    if family in COMMERCE_FAMILIES:
                        attempt = _commerce(attempt, market)
                    payloads.append(attempt)
    payloads[1].update(
        eligible=False, ineligible_reason="The synthetic fixture was unreachable (environment)."
    )
    payloads[2].update(
        critical_safety_event=True,
        outcome="critical-failure",
        safety_event_description="Synthetic: submitted without the approval.",
    )
    return payloads


def load_demo_runs(*, actor):
    with transaction.atomic():
        return attempts_ingest_batch(payloads=demo_payloads(), actor=actor)
