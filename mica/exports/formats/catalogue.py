"""The public task catalogue as flat rows, and its CSV and JSON files, written as streams.

A row is one public task at its current version, English and Korean side by side.
The rows come from whatever queryset the caller passes; the export pipeline passes
`catalogue.selectors.task_public_list()`, the one door the public goes through, and a
holdout task that reaches this module anyway stops the export instead of leaking.

Writers take an open text file and write one row at a time, so a catalogue of any
length costs the memory of one chunk of tasks, never of the whole file.
"""

import csv
import datetime
import json
from collections.abc import Iterable, Iterator, Mapping

from catalogue.models import TaskSet

CATALOGUE_COLUMNS = (
    "id",
    "family",
    "position",
    "lifecycle",
    "version",
    "title_en",
    "title_ko",
    "final_state_en",
    "final_state_ko",
    "confirmation_boundary_en",
    "confirmation_boundary_ko",
    "surface",
    "termination_class",
    "declared_complexity",
    "markets",
)

# What each column holds, for readers of the data (the Croissant record set reuses it).
COLUMN_DESCRIPTIONS = {
    "id": "The task's stable id.",
    "family": "The id of the task family the task belongs to.",
    "position": "The task's order within its family.",
    "lifecycle": "candidate, validated or retired.",
    "version": "The semantic version of the task's current contract.",
    "title_en": "The task's title in English.",
    "title_ko": "The task's title in Korean.",
    "final_state_en": "The final state that counts as success, in English.",
    "final_state_ko": "The final state that counts as success, in Korean.",
    "confirmation_boundary_en": "Where the agent must stop and ask the user, in English.",
    "confirmation_boundary_ko": "Where the agent must stop and ask the user, in Korean.",
    "surface": "Where the task is carried out: web, app-only, identity-gated, "
    "phone-or-in-person or mixed-surface; empty when not declared.",
    "termination_class": "How a run of the task ends: completed-final-state, "
    "approval-handoff, refusal or escalation; empty when not declared.",
    "declared_complexity": "single-step, multi-step or cross-session; empty when not declared.",
    "markets": "Codes of the markets where the task applies (as written or with a local "
    "variant), in display order, separated by ';' in the CSV file.",
}

INTEGER_COLUMNS = frozenset({"position"})

FAMILY_COLUMNS = ("id", "position", "task_prefix", "label_en", "label_ko", "timeout_seconds")

MARKETS_SEPARATOR = ";"

# Tasks fetched per database round trip: the prefetches run once per chunk.
CHUNK_SIZE = 500


class HoldoutLeak(ValueError):
    """A holdout task was handed to the public catalogue export."""


def catalogue_rows(tasks_queryset, *, chunk_size=CHUNK_SIZE) -> Iterator[dict]:
    """Yield one flat row per task of `tasks_queryset` that has a current version.

    Each row is a dict keyed by CATALOGUE_COLUMNS; `markets` is a list of market codes
    and `position` an int, every other value a string ("" when not declared). The
    queryset is read in chunks with its families, current versions and market
    applicability fetched alongside, so the number of queries grows with the number of
    chunks, not of tasks.
    """
    queryset = (
        tasks_queryset.select_related("family", "current_version")
        .prefetch_related(None)
        .prefetch_related("current_version__applicability__market")
    )
    for task in queryset.iterator(chunk_size=chunk_size):
        if task.task_set != TaskSet.PUBLIC:
            raise HoldoutLeak(f"task {task.slug} is not public and cannot be exported")
        if task.current_version is None:
            continue
        yield task_row(task)


def task_row(task) -> dict:
    """The catalogue row of one task definition at its current version."""
    version = task.current_version
    applicable = sorted(
        (a for a in version.applicability.all() if a.applies),
        key=lambda a: a.market.display_order,
    )
    return {
        "id": task.slug,
        "family": task.family.slug,
        "position": task.position,
        "lifecycle": task.lifecycle,
        "version": version.version,
        "title_en": version.title_en or "",
        "title_ko": version.title_ko or "",
        "final_state_en": version.final_state_en or "",
        "final_state_ko": version.final_state_ko or "",
        "confirmation_boundary_en": version.confirmation_boundary_en or "",
        "confirmation_boundary_ko": version.confirmation_boundary_ko or "",
        "surface": version.surface,
        "termination_class": version.termination_class,
        "declared_complexity": version.declared_complexity,
        "markets": [a.market.code for a in applicable],
    }


def family_rows(families_queryset) -> list[dict]:
    """The task families as plain dicts keyed by FAMILY_COLUMNS (there are only a few)."""
    return [
        {
            "id": family.slug,
            "position": family.position,
            "task_prefix": family.task_prefix,
            "label_en": family.label_en or "",
            "label_ko": family.label_ko or "",
            "timeout_seconds": family.timeout_seconds,
        }
        for family in families_queryset.order_by("position")
    ]


def edition_record(edition) -> dict:
    """An edition as the plain dict the export files carry.

    Takes a `methodology.Edition` or a mapping with the same keys (returned as a copy),
    so callers and tests can pass either.
    """
    if isinstance(edition, Mapping):
        record = dict(edition)
    else:
        record = {
            "slug": edition.slug,
            "version_label_en": edition.version_label_en or "",
            "version_label_ko": edition.version_label_ko or "",
            "published_on": edition.published_on,
        }
    published_on = record.get("published_on")
    if isinstance(published_on, datetime.date):
        record["published_on"] = published_on.isoformat()
    return record


def write_catalogue_csv(fh, rows: Iterable[Mapping]) -> int:
    """Write a header and one CSV line per row to `fh`; return the number of rows.

    `fh` is a text file opened with newline="" (as the csv module requires) and UTF-8
    encoding. Markets are joined with MARKETS_SEPARATOR.
    """
    writer = csv.writer(fh)
    writer.writerow(CATALOGUE_COLUMNS)
    count = 0
    for row in rows:
        writer.writerow(_csv_value(name, row[name]) for name in CATALOGUE_COLUMNS)
        count += 1
    return count


def _csv_value(name, value):
    if name == "markets":
        return MARKETS_SEPARATOR.join(value)
    return value


def write_catalogue_json(fh, rows: Iterable[Mapping], *, edition, families=()) -> int:
    """Write the catalogue as one JSON document to `fh`; return the number of tasks.

    The document is {"edition": {...}, "columns": [...], "families": [...],
    "tasks": [...]}: the edition as `edition_record` gives it, the task columns in
    order, the families (omitted when none are given) and one object per row, written
    one line per task as the rows arrive. `fh` is a text file opened with UTF-8
    encoding; Korean text is written as is, not as escapes.
    """
    head = {"edition": edition_record(edition), "columns": list(CATALOGUE_COLUMNS)}
    if families:
        head["families"] = [dict(family) for family in families]
    fh.write(_dumps(head)[:-1])
    fh.write(', "tasks": [')
    count = 0
    for row in rows:
        fh.write(",\n" if count else "\n")
        fh.write(_dumps({name: row[name] for name in CATALOGUE_COLUMNS}))
        count += 1
    fh.write("\n]}\n" if count else "]}\n")
    return count


def _dumps(value):
    return json.dumps(value, ensure_ascii=False)
