"""Writes the governance records back to content/governance.yaml, as the loader reads it.

The disclosure register lists each key's current statement (the superseded ones
are its history and stay in the database), in the order the keys were first stated.
"""

from pathlib import Path

from django.db.models import Min

from governance.models import (
    DecisionRight,
    DisclosureStatement,
    IndependenceItem,
    Refusal,
    RoleDisclosure,
)
from mica.bilingual import field_pair
from mica.content.loading import Folded, Quoted, Records, optional_text_pair, write_yaml

CONTENT_DIR = Path(__file__).resolve().parent / "content"
FILENAME = "governance.yaml"
LISTS = ("decision_rights", "refusals", "independence_open_items", "role_disclosures")


def _amount(value):
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def _amount_band(statement):
    if statement.amount_min is None and statement.amount_max is None:
        if not (statement.amount_currency or statement.amount_period):
            return None
    return {
        "min": _amount(statement.amount_min),
        "max": _amount(statement.amount_max),
        "currency": statement.amount_currency,
        "period": statement.amount_period,
    }


def _disclosures():
    first_stated = dict(
        DisclosureStatement.objects.order_by()
        .values("key")
        .annotate(first=Min("pk"))
        .values_list("key", "first")
    )
    current = sorted(
        DisclosureStatement.objects.filter(superseded_at__isnull=True),
        key=lambda statement: (first_stated[statement.key], statement.pk),
    )
    return Records(
        {
            "key": statement.key,
            "category": statement.category,
            "title": field_pair(statement, "title", Quoted),
            "statement": field_pair(statement, "statement", Folded),
            "basis": statement.basis,
            "confirmed_on": statement.confirmed_on,
            "confirm_every_days": statement.confirm_every_days,
            "amount_band": _amount_band(statement),
        }
        for statement in current
    )


def _decision_right(right):
    data = {
        "key": right.key,
        "right": field_pair(right, "right", Quoted),
        "holder": field_pair(right, "holder", Quoted),
        "independently_held": right.independently_held,
    }
    note = optional_text_pair(right, "note", Folded)
    if note:
        data["note"] = note
    return data


def _role_disclosures():
    roles = [value for value, _label in RoleDisclosure._meta.get_field("role").choices]
    rank = {role: index for index, role in enumerate(roles)}
    return Records(
        {
            "role": disclosure.role,
            "relationships": field_pair(disclosure, "relationships", Folded),
            "holdout_access": disclosure.holdout_access,
            "conflicts_declared": field_pair(disclosure, "conflicts_declared", Folded),
        }
        for disclosure in sorted(
            RoleDisclosure.objects.all(), key=lambda item: (rank.get(item.role, len(rank)), item.pk)
        )
    )


def dump(directory, report):
    data = {
        "disclosures": _disclosures(),
        "decision_rights": Records(
            map(_decision_right, DecisionRight.objects.order_by("position", "pk"))
        ),
        "refusals": [
            {"key": refusal.key, "text": field_pair(refusal, "text", Folded)}
            for refusal in Refusal.objects.order_by("position", "pk")
        ],
        "independence_open_items": Records(
            {
                "key": item.key,
                "title": field_pair(item, "title", Quoted),
                "detail": field_pair(item, "detail", Folded),
                "status": item.status,
            }
            for item in IndependenceItem.objects.order_by("position", "pk")
        ),
        "role_disclosures": _role_disclosures(),
    }
    write_yaml(
        directory / FILENAME,
        data,
        header_from=CONTENT_DIR / FILENAME,
        indent_sequences=True,
        double_quotes=True,
        blank_before=LISTS,
    )
    report(", ".join(f"{name}: {len(records)}" for name, records in data.items()))
