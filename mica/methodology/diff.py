"""What changed between two editions, claim by claim (matched by stable section id)."""

from mica.methodology.models import ChapterItem
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
