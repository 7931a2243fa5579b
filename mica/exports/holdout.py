"""The last guard before publication: no export may contain a holdout id or text.

Every public reader already goes through the public queryset; this scan checks
the written bytes themselves, in every spelling a file could carry them (raw,
JSON-escaped, XML-escaped, CSV-quoted), so a leak through any path is caught.
"""

import html
import json

from django.utils.translation import gettext as _

from catalogue.models import TaskSet, TaskVersion
from mica.bilingual import LANGUAGES

# Short texts ("Pay") would match ordinary words; ids are always long enough.
MIN_TEXT_LENGTH = 12
CHUNK = 1 << 20
TEXT_FIELDS = ("title", "final_state", "confirmation_boundary")


def holdout_needles():
    """Every holdout task id and text, as the strings an export must never contain, each
    with the record it comes from (named by number, so the message leaks nothing)."""
    needles = {}
    versions = TaskVersion.objects.filter(definition__task_set=TaskSet.HOLDOUT).select_related(
        "definition"
    )
    for version in versions.iterator(chunk_size=500):
        record = _("task version %(number)s") % {"number": version.pk}
        needles[version.definition.slug] = record
        for field in TEXT_FIELDS:
            for language in LANGUAGES:
                text = (getattr(version, f"{field}_{language}", "") or "").strip()
                if len(text) >= MIN_TEXT_LENGTH:
                    needles[text] = record
    return needles


def _spellings(needle):
    forms = {
        needle,
        json.dumps(needle)[1:-1],
        json.dumps(needle, ensure_ascii=False)[1:-1],
        html.escape(needle, quote=False),
        html.escape(needle),
        needle.replace('"', '""'),
    }
    return {form.encode() for form in forms}


def holdout_patterns(needles):
    """{spelling: needle} for every spelling of every needle."""
    return {form: needle for needle in needles for form in _spellings(needle)}


def holdout_hits(data, patterns):
    """The needles some spelling of which occurs in the bytes `data`."""
    return {needle for form, needle in patterns.items() if form in data}


def holdout_scan(paths, needles):
    """[(file name, record)] for every holdout needle ({needle: record}) found in the files;
    empty when clean."""
    patterns = holdout_patterns(needles)
    if not patterns:
        return []
    overlap = max(len(p) for p in patterns) - 1
    found = []
    for path in paths:
        hits = _scan_file(path, patterns, overlap)
        found.extend(sorted({(path.name, needles[needle]) for needle in hits}))
    return found


def _scan_file(path, patterns, overlap):
    hits, tail = set(), b""
    with open(path, "rb") as stream:
        while chunk := stream.read(CHUNK):
            window = tail + chunk
            hits.update(holdout_hits(window, patterns))
            tail = window[-overlap:] if overlap else b""
    return hits
