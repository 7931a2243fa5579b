"""Loads the governance records from content/governance.yaml; edited records are kept.

A disclosure whose file text changed (and nobody edited it since it was loaded)
becomes a new statement superseding the old one, so the register's history stays.
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
from mica.content.loading import read_yaml, texts

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


def _load_disclosure(canonical, item):
    current = DisclosureStatement.objects.filter(
        key=item["key"], superseded_at__isnull=True
    ).first()
    canonical.record(
        DisclosureStatement,
        item["key"],
        {"key": item["key"]},
        _disclosure_fields(item),
        existing=current,
        update=lambda _current, changes: disclosure_supersede(key=item["key"], changes=changes),
    )


def _load_keyed(canonical, model, items, fields):
    for position, item in enumerate(items, start=1):
        canonical.record(
            model, item["key"], {"key": item["key"]}, {"position": position, **fields(item)}
        )


def load(canonical):
    data = read_yaml(canonical.directory(CONTENT_DIR) / "governance.yaml")
    for item in data["disclosures"]:
        _load_disclosure(canonical, item)
    _load_keyed(
        canonical,
        DecisionRight,
        data["decision_rights"],
        lambda item: {
            "independently_held": item["independently_held"],
            **texts(item, "right", "holder", optional=("note",)),
        },
    )
    _load_keyed(canonical, Refusal, data["refusals"], lambda item: texts(item, "text"))
    _load_keyed(
        canonical,
        IndependenceItem,
        data["independence_open_items"],
        lambda item: {"status": item["status"], **texts(item, "title", "detail")},
    )
    for item in data["role_disclosures"]:
        canonical.record(
            RoleDisclosure,
            item["role"],
            {"role": item["role"]},
            {
                "holdout_access": item["holdout_access"],
                **texts(item, "relationships", "conflicts_declared"),
            },
        )
