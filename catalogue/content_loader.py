"""Loads the ten families and their task definitions from content/, idempotently."""

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
from catalogue.services import task_version_make_current, task_version_touch
from markets.selectors import market_list
from mica.content import read_yaml, texts, translated
from mica.errors import ValidationFailed
from mica.methodology.selectors import edition_current
from mica.methodology.services import edition_freeze_catalogue

CONTENT_DIR = Path(__file__).resolve().parent / "content"
CLAUSE_KEYS = {
    "obligations": ClauseKind.OBLIGATION,
    "invariants": ClauseKind.INVARIANT,
    "prohibited_states": ClauseKind.PROHIBITED,
}


def _load_family(item):
    measurement = item["measurement"]
    family, _created = TaskFamily.objects.update_or_create(
        slug=item["slug"],
        defaults={
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


def _load_version(definition, item, markets):
    version, _created = TaskVersion.objects.update_or_create(
        definition=definition,
        version=item["version"],
        defaults={
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
    version.clauses.all().delete()
    ContractClause.objects.bulk_create(
        [
            ContractClause(
                version=version, kind=kind, position=position, **translated({"text": text}, "text")
            )
            for key, kind in CLAUSE_KEYS.items()
            for position, text in enumerate(item[key], start=1)
        ]
    )
    version.applicability.all().delete()
    MarketApplicability.objects.bulk_create(
        [
            MarketApplicability(
                version=version,
                market=markets[code],
                status=entry["status"],
                **texts(entry, "note", optional=("variant", "region", "channel", "register")),
            )
            for code, entry in item["applicability"].items()
        ]
    )
    task_version_touch(version=version)
    task_version_make_current(version=version)


def _load_tasks(family, items, markets):
    for position, item in enumerate(items, start=1):
        if not item["id"].startswith(family.task_prefix):
            raise ValidationFailed(f"{item['id']}: does not start with {family.task_prefix}")
        definition, created = TaskDefinition.objects.update_or_create(
            slug=item["id"],
            defaults={
                "family": family,
                "position": position,
                "lifecycle": item["lifecycle"],
                "task_set": item["task_set"],
                "source": "MICA canonical content",
            },
        )
        _load_version(definition, item, markets)
        if created:
            ExposureEntry.objects.create(
                definition=definition,
                at=timezone.now(),
                where="MICA portal",
                artifact="public task catalogue",
            )


def load(report):
    markets = {m.code: m for m in market_list()}
    families = [_load_family(item) for item in read_yaml(CONTENT_DIR / "families.yaml")]
    for family in families:
        _load_tasks(family, read_yaml(CONTENT_DIR / "tasks" / f"{family.slug}.yaml"), markets)
    report(f"families: {len(families)}, tasks: {TaskDefinition.objects.count()}")
    current = edition_current()
    if current is not None:
        # The loaded edition is published as it loads: its catalogue is the one just loaded.
        edition_freeze_catalogue(current)
