"""Loads the task families and their task definitions from content/; edited records are kept."""

from pathlib import Path

from django.utils import timezone

from catalogue.models import (
    ClauseKind,
    ContractClause,
    ExposureEntry,
    MarketApplicability,
    TaskDefinition,
    TaskFamily,
    TaskVersion,
)
from catalogue.services import task_version_load_current, task_version_touch
from markets.selectors import market_list
from mica.content.loading import read_yaml, texts, translated
from mica.errors import ValidationFailed
from mica.methodology.models import EditionStatus
from mica.methodology.selectors import edition_current
from mica.methodology.services import edition_freeze_catalogue

CONTENT_DIR = Path(__file__).resolve().parent / "content"
CLAUSE_KEYS = {
    "obligations": ClauseKind.OBLIGATION,
    "invariants": ClauseKind.INVARIANT,
    "prohibited_states": ClauseKind.PROHIBITED,
}


def _load_family(canonical, item):
    measurement = item["measurement"]
    family, _outcome = canonical.record(
        TaskFamily,
        item["slug"],
        {"slug": item["slug"]},
        {
            "position": item["position"],
            "task_prefix": item["task_prefix"],
            "timeout_seconds": measurement["timeout_sec"],
            **translated(item, "label"),
            **translated(item, "summary"),
            "why_hard_en": item["why_it_is_hard"]["en"],
            "why_hard_ko": item["why_it_is_hard"]["ko"],
            **translated(measurement, "final_state_evidence"),
            **translated(measurement, "boundary_evidence"),
        },
    )
    return family


def _load_version(canonical, definition, item, markets):
    """A version with its clauses and market applicability; True when any of them changed."""
    key = f"{definition.slug}/{item['version']}"
    version, outcome = canonical.record(
        TaskVersion,
        key,
        {"definition": definition, "version": item["version"]},
        {
            **texts(
                item, "title", "final_state", "confirmation_boundary", optional=("idempotency",)
            ),
            "evidence_requirements": item["evidence_requirements"],
            "surface": item["surface"],
            "termination_class": item["termination_class"],
            "declared_complexity": item["declared_complexity"],
            "diagnostic_axes": item["diagnostic_axes"],
            "locality_conditions": item["locality_conditions"],
            "parameter_schema": item["parameters"],
        },
    )
    outcomes = {outcome}
    for clause_key, kind in CLAUSE_KEYS.items():
        for position, text in enumerate(item[clause_key], start=1):
            _clause, outcome = canonical.record(
                ContractClause,
                f"{key}/{kind}/{position}",
                {"version": version, "kind": kind, "position": position},
                translated({"text": text}, "text"),
            )
            outcomes.add(outcome)
    for code, entry in item["applicability"].items():
        _applicability, outcome = canonical.record(
            MarketApplicability,
            f"{key}/{code}",
            {"version": version, "market": markets[code]},
            {
                "status": entry["status"],
                **texts(entry, "note", optional=("variant", "region", "channel", "register")),
            },
        )
        outcomes.add(outcome)
    if outcomes & {"created", "updated"}:
        # Its content hash moves, so an approval of the old text is void.
        task_version_touch(version=version)
    return version


def _load_tasks(canonical, family, items, markets):
    for position, item in enumerate(items, start=1):
        if not item["id"].startswith(family.task_prefix):
            raise ValidationFailed(f"{item['id']}: does not start with {family.task_prefix}")
        definition, outcome = canonical.record(
            TaskDefinition,
            item["id"],
            {"slug": item["id"]},
            {
                "family": family,
                "position": position,
                "task_set": item["task_set"],
                "source": "MICA canonical content",
            },
            # Promotion moves the lifecycle; a load never moves it back.
            on_create={"lifecycle": item["lifecycle"]},
        )
        version = _load_version(canonical, definition, item, markets)
        if definition.current_version_id is None:
            task_version_load_current(version=version)
        if outcome == "created":
            ExposureEntry.objects.create(
                definition=definition,
                at=timezone.now(),
                where=ExposureEntry.PORTAL,
                artifact=ExposureEntry.PUBLIC_CATALOGUE,
            )


def load(canonical):
    markets = {m.code: m for m in market_list()}
    directory = canonical.directory(CONTENT_DIR)
    families = [_load_family(canonical, item) for item in read_yaml(directory / "families.yaml")]
    for family in families:
        path = directory / "tasks" / f"{family.slug}.yaml"
        _load_tasks(canonical, family, read_yaml(path), markets)
    current = edition_current()
    if current and current.status == EditionStatus.PUBLISHED and not current.catalogue_snapshot:
        # An edition loaded as published freezes the catalogue it was loaded with;
        # one published later froze its own then, and that never changes.
        edition_freeze_catalogue(current)
