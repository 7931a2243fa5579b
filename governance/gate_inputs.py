"""The fingerprint of everything a gate cell is computed from, besides its own attempts.

Seed: "Scores are derived, not stored ... so a published figure cannot drift away
from the evidence it claims to summarize." A cell stores figures for speed, so it
stores this fingerprint too; a reader compares it with the current one and treats
a cell computed under other thresholds, another edition or another task set as
blocked ("stale") until the recompute queued after the change has run.

A cell's own attempts need no fingerprint: they are append-only, and every new
attempt or invalidation recomputes its cell in the same transaction.
"""

import hashlib
import json

from django.db.models import Exists, OuterRef, QuerySet

from catalogue.models import LocalReview, MarketApplicability, ReviewState, TaskVersion

# The figures a cell carries beyond its first ones, by name: a cell computed before the
# gate derived one of them is stale, so it is recomputed before a reader or an export uses
# it, never shown without it. A new figure adds its name here, and so does a figure whose
# definition changed (commerce proximity is now taken over confirmed successes only).
CELL_FIGURES = (
    "reliability-across-repeats",
    "commerce-proximity-over-successes",
    "memory-exercised",
    "platforms-and-access-parity",
)


def _rows(queryset, *fields):
    # The query as it is, without the translation layer's queryset: its fallbacks for every
    # row cost more than the query over sixty thousand applicability rows.
    plain = QuerySet(model=queryset.model, query=queryset.all().query.chain())
    return [list(row) for row in plain.order_by(*fields).values_list(*fields)]


def gate_inputs_fingerprint(edition):
    """A digest of the edition's thresholds and the task set the gate reads (two queries):
    each version's task, set, lifecycle and references, and per market its applicability
    and whether its local review is approved."""
    approved = LocalReview.objects.filter(
        version=OuterRef("version_id"), market=OuterRef("market_id"), state=ReviewState.APPROVED
    )
    inputs = {
        "figures": CELL_FIGURES,
        "edition": [edition.slug, *map(str, edition.thresholds)] if edition else None,
        "versions": _rows(
            TaskVersion.objects,
            "pk",
            "definition_id",
            "definition__task_set",
            "definition__lifecycle",
            "definition__current_version_id",
            "speed_reference_seconds",
            "cost_reference_usd",
        ),
        "markets": _rows(
            MarketApplicability.objects.annotate(reviewed=Exists(approved)),
            "version_id",
            "market_id",
            "status",
            "reviewed",
        ),
    }
    encoded = json.dumps(inputs, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(encoded).hexdigest()
