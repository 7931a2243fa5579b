"""The scope planner: which cells (one market × one task) an evaluation would plan.

The computation is pure: it works on a `PlannerRecords` snapshot, so the page,
the manifest and the tests apply one set of rules. `planner_source()` is the
one read that fills the snapshot from the markets and catalogue selectors.
static/mica/planner.js repeats these rules in the browser for the live
summary; the server stays the authority because the form always submits.
"""

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.conf import settings
from django.db import models
from django.db.models import QuerySet
from django.utils import translation
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from catalogue.models import Applicability, Lifecycle, MarketApplicability
from catalogue.selectors import task_public_list
from markets.selectors import market_list
from mica.content.fragments import computed

MANIFEST_FORMAT = "mica-scope-manifest/1"
QUERY_KEYS = ("mode", "market", "task")


class ScopeMode(models.TextChoices):
    COUNTRY_FOCUSED = "country-focused", _("Country-focused")
    TASK_FOCUSED = "task-focused", _("Task-focused, across markets")
    CUSTOM_MATRIX = "custom-matrix", _("Custom matrix")
    FULL_BENCHMARK = "full-benchmark", _("Full benchmark")


DEFAULT_MODE = ScopeMode.COUNTRY_FOCUSED
# An unknown mode falls back to the one that plans exactly what was ticked,
# so a mistyped link never silently widens the scope.
FALLBACK_MODE = ScopeMode.CUSTOM_MATRIX
# Which side of the matrix each mode takes from the reader's choice; the other
# side is every market (or every task) of the records.
CHOSEN_MARKETS = {ScopeMode.COUNTRY_FOCUSED, ScopeMode.CUSTOM_MATRIX}
CHOSEN_TASKS = {ScopeMode.TASK_FOCUSED, ScopeMode.CUSTOM_MATRIX}


@dataclass(frozen=True)
class PlannerRecords:
    """What the rules need from the records: ids in the method's order and applicability."""

    markets: tuple[str, ...]
    tasks: tuple[str, ...]
    applicability: dict = field(default_factory=dict)

    def applicability_of(self, market, task):
        # A task applies only where its version declares it; an undeclared
        # market is not one an evaluation could execute in.
        return self.applicability.get((market, task), Applicability.NOT_APPLICABLE)

    def applies(self, market, task):
        return self.applicability_of(market, task) != Applicability.NOT_APPLICABLE


@dataclass(frozen=True)
class Selection:
    """The reader's choice, already cleaned: a known mode and public ids in records order."""

    mode: str
    markets: tuple[str, ...]
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    market: str
    task: str
    applicability: str

    @property
    def execution_eligible(self):
        return self.applicability != Applicability.NOT_APPLICABLE


@dataclass(frozen=True)
class Scope:
    selection: Selection
    markets: tuple[str, ...]
    tasks: tuple[str, ...]
    cells: tuple[Cell, ...]
    missing: tuple[str, ...]
    market_total: int
    task_total: int
    # Nothing runs from the planner: these stay zero by construction.
    executed: int = 0
    failed: int = 0

    @property
    def valid(self):
        return not self.missing

    @property
    def planned(self):
        return len(self.cells)

    @property
    def execution_eligible(self):
        return sum(1 for cell in self.cells if cell.execution_eligible)

    @property
    def not_applicable(self):
        return self.planned - self.execution_eligible


def _chosen(values, known):
    """Submitted ids kept only if known, once each, in the records' order."""
    wanted = {value.strip() for value in values}
    return tuple(identifier for identifier in known if identifier in wanted)


def _mode(value):
    if value is None:
        return DEFAULT_MODE
    return value if value in ScopeMode.values else FALLBACK_MODE


def initial_selection(records):
    """A first visit: the default mode with the first market and task of the records ticked."""
    return Selection(DEFAULT_MODE, records.markets[:1], records.tasks[:1])


def selection_from_query(query, records):
    """Read mode, markets and tasks from a query; anything unknown is dropped, never an error."""
    if not any(key in query for key in QUERY_KEYS):
        return initial_selection(records)
    markets = [value.upper() for value in query.getlist("market")]
    return Selection(
        mode=_mode(query.get("mode")),
        markets=_chosen(markets, records.markets),
        tasks=_chosen(query.getlist("task"), records.tasks),
    )


def scope_plan(selection, records):
    """The cells a selection plans: markets × tasks by the mode, with each cell's applicability."""
    markets = selection.markets if selection.mode in CHOSEN_MARKETS else records.markets
    tasks = selection.tasks if selection.mode in CHOSEN_TASKS else records.tasks
    missing = tuple(name for name, ids in (("market", markets), ("task", tasks)) if not ids)
    cells = ()
    if not missing:
        cells = tuple(
            Cell(market, task, records.applicability_of(market, task))
            for market in markets
            for task in tasks
        )
    return Scope(
        selection=selection,
        markets=markets,
        tasks=tasks,
        cells=cells,
        missing=missing,
        market_total=len(records.markets),
        task_total=len(records.tasks),
    )


def selection_query(selection):
    """The query that reproduces a selection; sides the mode ignores are left out."""
    pairs = [("mode", selection.mode)]
    if selection.mode in CHOSEN_MARKETS:
        pairs += [("market", market) for market in selection.markets]
    if selection.mode in CHOSEN_TASKS:
        pairs += [("task", task) for task in selection.tasks]
    return urlencode(pairs)


def scope_counts(scope):
    return {
        "markets_selected": len(scope.markets),
        "markets_total": scope.market_total,
        "tasks_selected": len(scope.tasks),
        "tasks_total": scope.task_total,
        "planned": scope.planned,
        "execution_eligible": scope.execution_eligible,
        "not_applicable": scope.not_applicable,
        "executed": scope.executed,
        "failed": scope.failed,
    }


def scope_manifest(scope, edition):
    """The frozen scope: explicit lists and cells, so a later catalogue change cannot move it."""
    return {
        "format": MANIFEST_FORMAT,
        "edition": {"slug": edition.slug, "label": edition.version_label} if edition else None,
        "mode": scope.selection.mode,
        "cell_rule": "explicit-cells",
        "markets": list(scope.markets),
        "tasks": list(scope.tasks),
        "counts": scope_counts(scope),
        "cells": [
            {"market": cell.market, "task": cell.task, "applicability": cell.applicability}
            for cell in scope.cells
        ],
    }


@dataclass(frozen=True)
class PlannerSource:
    """The records for the rules plus the rows the page shows (names, titles, families)."""

    records: PlannerRecords
    markets: list
    tasks: list


@dataclass(frozen=True)
class PlannerTask:
    """What the page shows of a task, in the reader's language: its family and title."""

    slug: str
    family_id: int
    family_label: str
    title: str


def _plannable_tasks():
    # The public list is the one door holdout tasks never pass; a retired task
    # is out of any new evaluation. Only applicability is needed here, read apart
    # as plain values, so the contracts the catalogue pages prefetch are not loaded.
    return task_public_list().exclude(lifecycle=Lifecycle.RETIRED).prefetch_related(None)


def _plain(queryset):
    """The same query without the translation layer's queryset, whose fallbacks cost more
    than the query for sixty thousand rows of plain values naming their columns."""
    return QuerySet(model=queryset.model, query=queryset.query.chain())


def _in_language(english, korean, in_korean):
    """A translated column as the reader reads it: Korean where there is Korean, English
    otherwise (the project's fallback)."""
    return korean if in_korean and korean else english


def _planner_rows():
    """The rows the planner reads, alike in either language: each plannable task with
    both titles, and its applicability per market. One fragment for both languages, so
    the second of the two planner pages (a bake renders both) does not read ten thousand
    tasks and sixty thousand cells again."""
    with translation.override(settings.LANGUAGE_CODE):
        return computed("planner-rows", _planner_rows_read)


def _planner_rows_read():
    """Plain values in three queries: ten thousand records, their families and versions,
    cost seconds; their values a tenth of that."""
    tasks = _plain(_plannable_tasks()).values_list(
        "slug",
        "family_id",
        "family__label_en",
        "family__label_ko",
        "current_version_id",
        "current_version__title_en",
        "current_version__title_ko",
    )
    # The versions by a subquery: ten thousand ids as parameters take longer to write
    # into the statement than the database takes to find them.
    current = _plannable_tasks().values("current_version_id")
    entries = _plain(MarketApplicability.objects.filter(version__in=current)).values_list(
        "version_id", "market_id", "status"
    )
    return list(tasks), list(entries)


def _planner_tasks(rows):
    """[(version id, PlannerTask)] in the reader's language."""
    korean = get_language() == "ko"
    tasks = []
    for slug, family, label_en, label_ko, version, title_en, title_ko in rows:
        label = _in_language(label_en, label_ko, korean)
        tasks.append(
            (version, PlannerTask(slug, family, label, _in_language(title_en, title_ko, korean)))
        )
    return tasks


def planner_source():
    """Three queries whatever the size of the catalogue: markets, tasks, applicability."""
    markets = list(market_list())
    code_of = {market.pk: market.code for market in markets}
    task_rows, entries = _planner_rows()
    versions = _planner_tasks(task_rows)
    tasks = [task for _version, task in versions]
    slug_of = {version: task.slug for version, task in versions}
    applicability = {
        (code_of[market], slug_of[version]): status
        for version, market, status in entries
        if market in code_of and version in slug_of
    }
    records = PlannerRecords(
        markets=tuple(market.code for market in markets),
        tasks=tuple(task.slug for task in tasks),
        applicability=applicability,
    )
    return PlannerSource(records=records, markets=markets, tasks=tasks)
