"""What changed between two editions, claim by claim (matched by stable section id)."""

import difflib

from markdown_it import MarkdownIt

from mica.methodology.facts import live_facts
from mica.methodology.models import ChapterItem, ClaimKind
from mica.methodology.presenters import Reader
from mica.methodology.services import edition_task_catalogue

TEXT_FIELDS = ("term_en", "term_ko", "detail_en", "detail_ko", "kind")


def _claims(edition):
    return {item.section_id: item for item in ChapterItem.objects.filter(edition=edition)}


def edition_diff(older, newer):
    """Claims added, changed and retracted, tasks added and retired; empty lists when none."""
    before, after = _claims(older), _claims(newer)
    changed = []
    for section_id in sorted(set(before) & set(after)):
        fields = [
            f
            for f in TEXT_FIELDS
            if getattr(before[section_id], f) != getattr(after[section_id], f)
        ]
        if fields:
            changed.append(
                {
                    "section_id": section_id,
                    "fields": fields,
                    "before": _text(before[section_id]),
                    "after": _text(after[section_id]),
                }
            )
    return {
        "from": older.slug,
        "to": newer.slug,
        "added": [_text(after[s]) for s in sorted(set(after) - set(before))],
        "changed": changed,
        "retracted": [_text(before[s]) for s in sorted(set(before) - set(after))],
        **_task_diff(older, newer),
    }


def _task_diff(older, newer):
    """Tasks added to and retired from the catalogue between the two editions."""
    before = {t["slug"]: t for t in edition_task_catalogue(older)}
    after = {t["slug"]: t for t in edition_task_catalogue(newer)}
    return {
        "tasks_added": [after[s] for s in after if s not in before],
        "tasks_retired": [before[s] for s in before if s not in after],
    }


def _text(item):
    return {
        "section_id": item.section_id,
        "kind": item.kind,
        "term": {"en": item.term_en, "ko": item.term_ko},
        "detail": {"en": item.detail_en, "ko": item.detail_ko},
    }


# Raw HTML off: a stored "<script>" stays a run of text, escaped where the page prints it.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})
_READ_AS_TEXT = {"text", "text_special", "code_inline"}
_READ_AS_SPACE = {"softbreak", "hardbreak"}


def reading_text(reader, text):
    """The words a reader reads: figures filled in, Markdown marks dropped, spaces single."""
    parts = []
    for token in _MARKDOWN.parseInline(reader.plain(text)):
        for child in token.children or ():
            if child.type in _READ_AS_TEXT:
                parts.append(child.content)
            elif child.type in _READ_AS_SPACE:
                parts.append(" ")
    return " ".join("".join(parts).split())


def word_changes(before, after):
    """`after` against `before`, word by word: runs kept, removed and added, in reading order.

    Words are what whitespace separates, so a Korean eojeol changes as one word.
    """
    old, new = before.split(), after.split()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    runs = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            runs.append({"change": "kept", "text": " ".join(old[i1:i2])})
            continue
        if i2 > i1:
            runs.append({"change": "removed", "text": " ".join(old[i1:i2])})
        if j2 > j1:
            runs.append({"change": "added", "text": " ".join(new[j1:j2])})
    return runs


def edition_diff_read(older, newer, language):
    """The edition diff as a reader of `language` reads it: each edition's claims with the
    figures that edition states, and each changed claim word by word."""
    diff = edition_diff(older, newer)
    before = Reader(language, live_facts(older))
    after = Reader(language, live_facts(newer))
    return {
        **diff,
        "added": [_claim_read(after, claim) for claim in diff["added"]],
        "changed": [_change_read(before, after, change) for change in diff["changed"]],
        "retracted": [_claim_read(before, claim) for claim in diff["retracted"]],
    }


def _claim_read(reader, claim):
    return {
        "section_id": claim["section_id"],
        "term": reading_text(reader, claim["term"]),
        "detail": reading_text(reader, claim["detail"]),
    }


def _change_read(before, after, change):
    old, new = change["before"], change["after"]
    term = word_changes(reading_text(before, old["term"]), reading_text(after, new["term"]))
    detail = word_changes(reading_text(before, old["detail"]), reading_text(after, new["detail"]))
    kind = None
    if old["kind"] != new["kind"]:
        kind = {"before": _kind_label(old["kind"]), "after": _kind_label(new["kind"])}
    return {
        "section_id": change["section_id"],
        "term": term,
        "detail": detail,
        "kind": kind,
        # Changed in the other language only, or in a placeholder that reads the same.
        "reads_the_same": kind is None and _all_kept(term) and _all_kept(detail),
    }


def _kind_label(kind):
    return dict(ClaimKind.choices).get(kind, kind)


def _all_kept(runs):
    return all(run["change"] == "kept" for run in runs)
