"""Loads the governance records from content/governance.yaml.

A disclosure whose text changed since the last load is not overwritten: the
change becomes a new statement superseding the old one, so the history stays.
"""

from pathlib import Path

from governance.models import (
    DecisionRight,
    DisclosureStatement,
    IndependenceItem,
    Refusal,
    RoleDisclosure,
)
from governance.services import disclosure_supersede
from mica.content import read_yaml, texts

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def _disclosure_fields(item):
    band = item.get("amount_band") or {}
    return {
        "category": item["category"],
        "basis": item["basis"],
        "confirmed_on": item["confirmed_on"],
        "confirm_every_days": item["confirm_every_days"],
        "amount_min": band.get("min"),
        "amount_max": band.get("max"),
        "amount_currency": band.get("currency", ""),
        "amount_period": band.get("period", ""),
        **texts(item, "title", "statement"),
    }


def _load_disclosure(item):
    fields = _disclosure_fields(item)
    current = DisclosureStatement.objects.filter(
        key=item["key"], superseded_at__isnull=True
    ).first()
    if current is None:
        DisclosureStatement.objects.create(key=item["key"], **fields)
        return
    meta = DisclosureStatement._meta
    changed = any(
        meta.get_field(name).to_python(value) != getattr(current, name)
        for name, value in fields.items()
    )
    if changed:
        disclosure_supersede(key=item["key"], changes=fields)


def load(report):
    data = read_yaml(CONTENT_DIR / "governance.yaml")
    for item in data["disclosures"]:
        _load_disclosure(item)
    for position, item in enumerate(data["decision_rights"], start=1):
        DecisionRight.objects.update_or_create(
            key=item["key"],
            defaults={
                "position": position,
                "independently_held": item["independently_held"],
                **texts(item, "right", "holder", optional=("note",)),
            },
        )
    for position, item in enumerate(data["refusals"], start=1):
        Refusal.objects.update_or_create(
            key=item["key"], defaults={"position": position, **texts(item, "text")}
        )
    for position, item in enumerate(data["independence_open_items"], start=1):
        IndependenceItem.objects.update_or_create(
            key=item["key"],
            defaults={
                "position": position,
                "status": item["status"],
                **texts(item, "title", "detail"),
            },
        )
    for item in data["role_disclosures"]:
        RoleDisclosure.objects.update_or_create(
            role=item["role"],
            defaults={
                "holdout_access": item["holdout_access"],
                **texts(item, "relationships", "conflicts_declared"),
            },
        )
    report(f"disclosures: {len(data['disclosures'])}")
