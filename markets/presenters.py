"""Market records shaped for pages: vocabulary codes with their labels, audits attached."""

from markets.models import DATASHEET_FIELDS
from markets.services import DATASHEET_FIGURES, coverage_audit
from mica.dot_matrix import dot_matrix
from mica.methodology.pack import fill_placeholders
from mica.vocabulary import (
    COVERAGE_DIMENSIONS,
    AuthorizationBoundary,
    CompletionSemantics,
    EvidenceType,
    RecoveryCondition,
    Surface,
    TaskFamily,
    label_for,
)


def labelled(choices, codes):
    return [{"code": code, "label": label_for(choices, code)} for code in codes]


def situation_view(situation):
    return {
        "record": situation,
        "families": labelled(TaskFamily, situation.task_families),
        "surfaces": labelled(Surface, situation.surfaces),
        "authorization": labelled(AuthorizationBoundary, [situation.authorization_boundary])[0],
        "completion": labelled(CompletionSemantics, [situation.completion_semantics])[0],
        "recovery": labelled(RecoveryCondition, situation.recovery_conditions),
        "evidence": labelled(EvidenceType, situation.evidence_types),
    }


def market_row(market_edition):
    situations = list(market_edition.situations.all())
    return {
        "market": market_edition.market,
        "edition": market_edition,
        "situation_count": len(situations),
        "audit": coverage_audit(situations),
    }


def coverage_matrix(rows):
    """Per dimension: for each vocabulary value, how many situations of each market use it."""
    matrix = []
    for key, label, choices, _required in COVERAGE_DIMENSIONS:
        if choices is None:
            continue
        columns = [{"code": code, "label": text} for code, text in choices.choices]
        lines = []
        for row in rows:
            counts = {code: 0 for code, _text in choices.choices}
            for situation in row["edition"].situations.all():
                for code in _situation_codes(situation, key):
                    counts[code] = counts.get(code, 0) + 1
            lines.append(
                {
                    "market": row["market"],
                    "cells": [{"column": c, "count": counts[c["code"]]} for c in columns],
                }
            )
        matrix.append(
            {
                "key": key,
                "label": label,
                "columns": columns,
                "lines": lines,
                "figure": dot_matrix(
                    [line["market"].code for line in lines],
                    [column["label"] for column in columns],
                    [[cell["count"] for cell in line["cells"]] for line in lines],
                ),
            }
        )
    return matrix


def _situation_codes(situation, key):
    if key == "authorization_boundaries":
        return [situation.authorization_boundary]
    if key == "completion_semantics":
        return [situation.completion_semantics]
    return getattr(situation, key)


def platform_groups(market_edition):
    by_family = {r.task_family: r for r in market_edition.platform_registrations.all()}
    return [
        {"family": {"code": code, "label": label}, "registration": by_family.get(code)}
        for code, label in TaskFamily.choices
        if code in by_family
    ]


def datasheet_facts(market_edition):
    """What a datasheet's ``{{name}}`` figures stand for, counted from the records
    (``markets.selectors.datasheet_figures``)."""
    return {name: getattr(market_edition, f"figure_{name}") for name in DATASHEET_FIGURES}


def datasheet_text(market_edition, text):
    """A datasheet text as a reader sees it: its counts filled in from the records."""
    return fill_placeholders(text or "", datasheet_facts(market_edition))


def datasheet_view(market_edition):
    """{field: text} of the market edition's datasheet, figures filled; None without one."""
    sheet = getattr(market_edition, "datasheet", None)
    if sheet is None:
        return None
    return {name: datasheet_text(market_edition, getattr(sheet, name)) for name in DATASHEET_FIELDS}
