"""What changed between two editions, claim by claim (matched by stable section id)."""

from mica.methodology.models import ChapterItem

TEXT_FIELDS = ("term_en", "term_ko", "detail_en", "detail_ko", "kind")


def _claims(edition):
    return {item.section_id: item for item in ChapterItem.objects.filter(edition=edition)}


def edition_diff(older, newer):
    """{"added", "changed", "retracted"}: lists of claims; empty lists when nothing moved."""
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
    }


def _text(item):
    return {
        "section_id": item.section_id,
        "kind": item.kind,
        "term": {"en": item.term_en, "ko": item.term_ko},
        "detail": {"en": item.detail_en, "ko": item.detail_ko},
    }
