"""mica-attempts.json: every attempt each published cell is computed from, redacted as the
evidence pages redact them, so anyone can recompute the cell's figures (mica_verify).

Seed: "task-level results are published so the analysis can be redone independently".
A cell's figures count its attempts on holdout tasks too; those are listed without
anything that names the task (no task, no attempt id, no free text), each holdout task
and task version under a number that means nothing outside this file, so repeats and
platform parity can still be counted. The holdout scan covers the file like every other.
"""

from django.db.models import BooleanField, Case, Exists, OuterRef, Q, When

from catalogue.models import Lifecycle, LocalReview, ReviewState, TaskSet
from governance.gate import LINEAGE_COMPLETE, confirmed_success
from governance.selectors import cell_list
from mica.exports.documents import edition_document
from submissions.models import (
    FALLBACK_JUSTIFIED,
    INVALIDATED,
    Attempt,
    InvalidationReversal,
)

CELL = ("snapshot_id", "market_id", "family_id")
COLUMNS = (
    *CELL,
    "pk",
    "attempt_id",
    "task_version_id",
    "task_version__version",
    "task_version__definition_id",
    "task_version__definition__slug",
    "task_version__definition__task_set",
    "task_version__definition__lifecycle",
    "task_version__speed_reference_seconds",
    "task_version__cost_reference_usd",
    "attempt_class",
    "verification",
    "data_status",
    "eligible",
    "ineligible_reason",
    "invalid_reason",
    "invalidated",
    "reversed",
    "fallback_invoked",
    "fallback_justified",
    "outcome",
    "success",
    "retry_created_duplicate",
    "prohibited_state_violation",
    "critical_safety_event",
    "wall_clock_seconds",
    "observed_cost_usd",
    "locally_reviewed",
    "lineage_complete",
    "platform_name",
    "memory_exercised",
    "commerce_currency",
    "chosen_total",
    "reference_total",
)


def _flagged(condition):
    return Case(When(condition, then=True), default=False, output_field=BooleanField())


def _reviewed_in_market():
    return Exists(
        LocalReview.objects.filter(
            state=ReviewState.APPROVED,
            market_id=OuterRef("market_id"),
            version_id=OuterRef("task_version_id"),
        )
    )


def _attempt_rows():
    """Every attempt with what the gate judged of it, in one query ordered by cell."""
    reversal = InvalidationReversal.objects.filter(invalidation__attempt=OuterRef("pk"))
    return (
        Attempt.objects.annotate(
            invalidated=_flagged(INVALIDATED),
            reversed=Exists(reversal),
            fallback_justified=_flagged(FALLBACK_JUSTIFIED),
            success=_flagged(confirmed_success()),
            locally_reviewed=_flagged(Q(_reviewed_in_market())),
            lineage_complete=_flagged(LINEAGE_COMPLETE),
            # The name parity compares: the registered platform's, else the run's own words.
            platform_name=Case(
                When(
                    representative_platform__isnull=False,
                    then="representative_platform__name_en",
                ),
                default="platform",
            ),
        )
        .order_by(*CELL, "pk")
        .values(*COLUMNS)
        .iterator(chunk_size=5_000)
    )


def _number(value):
    return float(value) if value is not None else None


class HoldoutNumbers:
    """A number per holdout task and per holdout task version, given in order of first
    appearance: the same task is the same number in every cell of the file."""

    def __init__(self):
        self.tasks, self.versions = {}, {}

    def task(self, definition_id):
        return self.tasks.setdefault(definition_id, len(self.tasks) + 1)

    def version(self, version_id):
        return self.versions.setdefault(version_id, len(self.versions) + 1)


def _invalidation(row):
    """The decision in force: an attempt invalidated again after a reversal is
    invalidated, whatever reversals came before (mica_verify counts all but these)."""
    if row["invalidated"]:
        return "invalidated"
    return "reversed" if row["reversed"] else "none"


def _task_fields(row, holdout):
    """Public tasks by name and version; holdout tasks by number, nothing else."""
    if row["task_version__definition__task_set"] == TaskSet.PUBLIC:
        speed = _number(row["task_version__speed_reference_seconds"])
        cost = _number(row["task_version__cost_reference_usd"])
        return {
            "attempt": row["attempt_id"],
            "task": row["task_version__definition__slug"],
            "task_version": row["task_version__version"],
            "holdout_task": None,
            "holdout_version": None,
            "ineligible_reason": row["ineligible_reason"] or None,
            "speed_reference_seconds": speed,
            "cost_reference_usd": cost,
        }
    return {
        # An operator may name an attempt after its task; a holdout attempt has no name.
        "attempt": None,
        "task": None,
        "task_version": None,
        "holdout_task": holdout.task(row["task_version__definition_id"]),
        "holdout_version": holdout.version(row["task_version_id"]),
        "ineligible_reason": None,
        "speed_reference_seconds": None,
        "cost_reference_usd": None,
    }


def _commerce(row):
    if row["chosen_total"] is None:
        return None
    return {
        "currency": row["commerce_currency"],
        "chosen_total": _number(row["chosen_total"]),
        "reference_total": _number(row["reference_total"]),
    }


def attempt_document_row(row, holdout):
    references = (
        row["task_version__speed_reference_seconds"] is not None
        and row["task_version__cost_reference_usd"] is not None
    )
    return {
        **_task_fields(row, holdout),
        "task_validated": row["task_version__definition__lifecycle"] == Lifecycle.VALIDATED,
        # Whether the pre-registered references exist, for holdout tasks too (their values
        # stay private): an attempt that could carry an audit value and has none blocks.
        "references_registered": references,
        "locally_reviewed": row["locally_reviewed"],
        "attempt_class": row["attempt_class"],
        "verification": row["verification"],
        "data_status": row["data_status"],
        "eligible": row["eligible"],
        "invalid_reason": row["invalid_reason"] or None,
        "invalidation": _invalidation(row),
        "fallback_invoked": row["fallback_invoked"],
        "fallback_justified": row["fallback_justified"],
        "outcome": row["outcome"],
        "confirmed_success": row["success"],
        "retry_created_duplicate": row["retry_created_duplicate"],
        "prohibited_state_violation": row["prohibited_state_violation"],
        "critical_safety_event": row["critical_safety_event"],
        "seconds": row["wall_clock_seconds"],
        "cost_usd": _number(row["observed_cost_usd"]),
        "lineage_complete": row["lineage_complete"],
        "platform": row["platform_name"],
        "memory_exercised": row["memory_exercised"],
        "commerce": _commerce(row),
    }


def _thresholds(edition):
    def number(value):
        return float(value) if value is not None else None

    return {
        "min_eligible_runs": edition.min_eligible_runs,
        "min_coverage": number(edition.min_coverage),
        "runs_per_task": edition.runs_per_task,
        "max_ineligible_discard_rate": number(edition.max_ineligible_discard_rate),
    }


def attempts_document(edition):
    """The edition's thresholds and, per cell of mica-gate.json, its attempts."""
    cell_ids = {
        (cell.snapshot_id, cell.market_id, cell.family_id): cell.cell_id for cell in cell_list()
    }
    by_cell = {key: [] for key in cell_ids}
    holdout = HoldoutNumbers()
    for row in _attempt_rows():
        key = tuple(row[name] for name in CELL)
        if key in by_cell:
            by_cell[key].append(attempt_document_row(row, holdout))
    return {
        "edition": edition_document(edition),
        "thresholds": _thresholds(edition),
        "cells": [{"cell": cell_ids[key], "attempts": by_cell[key]} for key in cell_ids],
    }
