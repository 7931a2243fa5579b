"""Writes the methodology's records back to content/*.yaml, in the shape the loader reads.

The editions go to editions.yaml (oldest first); the records of the last one, the
edition the loader loads into, go to the files of mica.methodology.pack.CONTENT_FILES.
A value the loader defaults is left out, as the shipped files leave it out.
"""

from pathlib import Path

from django.db.models import Prefetch
from django.utils.translation import gettext as _

from mica.bilingual import field_pair
from mica.content.loading import Records, optional_text_pair, write_yaml
from mica.errors import ValidationFailed
from mica.methodology import models
from mica.methodology.content_loader import CITATION_FIELDS, CITATION_LISTS
from mica.methodology.pack import CONTENT_FILES

CONTENT_DIR = Path(__file__).resolve().parent / "content"

# pack.yaml's keys in the order the file lists them (PostgreSQL's jsonb keeps no order).
PACK_KEYS = [
    "title",
    "en",
    "ko",
    "generated_from",
    "intro",
    "header",
    "eyebrow",
    "lead",
    "figures",
    "download_label",
    "download_note",
    "status",
    "heading",
    "lines",
    "key",
    "text",
    "colophon",
    "references",
    "governance",
    "label",
    "link",
    "labels",
    "see_refs",
    "see_link",
    "borrowed",
    "not_adopted",
    "implemented",
    "planned",
    "state_separator",
    "reference_separator",
    "english_pack_korean_appendix",
    "register_heading_note",
    "korean_document",
    "leave_out",
    "as_paragraph",
    "formulas",
    "item",
    "formula",
]


def _in_file_order(value):
    if isinstance(value, dict):
        rank = {key: index for index, key in enumerate(PACK_KEYS)}
        keys = sorted(value, key=lambda key: rank.get(key, len(PACK_KEYS)))
        return {key: _in_file_order(value[key]) for key in keys}
    if isinstance(value, list):
        return [_in_file_order(item) for item in value]
    return value


def _write(directory, filename, data):
    write_yaml(
        directory / filename, data, header_from=CONTENT_DIR / filename, literal_long_texts=True
    )


def _without_none(mapping):
    return {key: value for key, value in mapping.items() if value is not None}


def _item(item):
    return _without_none(
        {
            "section_id": item.section_id,
            "type": item.item_type,
            "kind": item.kind or None,
            "state": item.state or None,
            "term": field_pair(item, "term"),
            "detail": field_pair(item, "detail"),
            "refs": list(item.reference_keys) or None,
            "link": item.link or None,
            "link_label": optional_text_pair(item, "link_label"),
        }
    )


def _chapter(chapter):
    data = {
        "number": chapter.number,
        "section_id": chapter.section_id,
        "title": field_pair(chapter, "title"),
        "lead": field_pair(chapter, "lead"),
    }
    if chapter.body != models.ChapterBody.ITEMS:
        data["body"] = chapter.body
    if not chapter.in_pack:
        data["in_pack"] = False
    items = [_item(item) for item in chapter.items.all()]
    if items or chapter.body == models.ChapterBody.ITEMS:
        data["items"] = Records(items)
    return data


def _chapters(edition):
    items = models.ChapterItem.objects.order_by("position", "pk")
    chapters = (
        models.Chapter.objects.filter(edition=edition)
        .order_by("position", "pk")
        .prefetch_related(Prefetch("items", queryset=items))
    )
    return Records(_chapter(chapter) for chapter in chapters)


def _references(edition):
    groups = (
        models.ReferenceGroup.objects.filter(edition=edition)
        .select_related("chapter")
        .order_by("position", "pk")
    )
    references = (
        models.Reference.objects.filter(edition=edition)
        .select_related("group")
        .order_by("position", "pk")
    )
    return {
        "groups": Records(
            _without_none(
                {
                    "section_id": group.section_id,
                    "chapter": group.chapter.section_id,
                    "title": optional_text_pair(group, "title"),
                    "intro": optional_text_pair(group, "intro"),
                }
            )
            for group in groups
        ),
        "references": Records(
            _without_none(
                {
                    "key": reference.key,
                    "section_id": reference.section_id,
                    "group": reference.group.section_id,
                    "title": field_pair(reference, "title"),
                    "subtitle": optional_text_pair(reference, "subtitle"),
                    "venue": optional_text_pair(reference, "venue"),
                    "url": reference.url,
                    "borrowed": optional_text_pair(reference, "borrowed"),
                    "not_adopted": optional_text_pair(reference, "not_adopted"),
                    "note": optional_text_pair(reference, "note"),
                    "cite": _citation(reference),
                }
            )
            for reference in references
        ),
    }


def _citation(reference):
    """The "cite" mapping the loader reads (content_loader.citation_fields), or None."""
    cite = {}
    for name in CITATION_FIELDS:
        value = getattr(reference, name)
        if name in CITATION_LISTS:
            value = value.splitlines()
        cite[name] = value or None
    return _without_none(cite) or None


def _contract_section(section):
    data = {
        "section_id": section.section_id,
        # The loader reads a missing number as none; the files spell it out as null.
        "number": section.number or None,
        "title": field_pair(section, "title"),
    }
    for name in ("eyebrow", "lead"):
        value = optional_text_pair(section, name)
        if value:
            data[name] = value
    numbered = field_pair(section, "numbered", bool)
    if any(numbered.values()):
        data["numbered"] = True if all(numbered.values()) else numbered
    data["items"] = Records(
        _without_none(
            {
                "section_id": item.section_id,
                "term": optional_text_pair(item, "term"),
                "detail": field_pair(item, "detail"),
            }
        )
        for item in section.items.all()
    )
    return data


def _contract(edition, heading):
    items = models.ContractItem.objects.order_by("position", "pk")
    sections = (
        models.ContractSection.objects.filter(edition=edition)
        .order_by("position", "pk")
        .prefetch_related(Prefetch("items", queryset=items))
    )
    return {"heading": heading, "sections": Records(map(_contract_section, sections))}


def _section_list(model, edition, *fields):
    return Records(
        {"section_id": record.section_id, **{name: field_pair(record, name) for name in fields}}
        for record in model.objects.filter(edition=edition).order_by("position", "pk")
    )


def dump(directory, report):
    editions = list(models.Edition.objects.order_by("pk"))
    if not editions:
        raise ValidationFailed(_("There is no edition to write out."))
    edition = editions[-1]
    _write(
        directory,
        "editions.yaml",
        Records(
            {
                "slug": record.slug,
                "version_label": field_pair(record, "version_label"),
                "status": record.status,
                # The date the loader reads as the edition's review cutoff, when it has one.
                **({"review_cutoff": record.review_cutoff} if record.review_cutoff else {}),
            }
            for record in editions
        ),
    )
    texts = edition.pack_texts or {}
    kinds = models.ReadingKind.objects.filter(edition=edition).order_by("position", "pk")
    references = _references(edition)
    chapters = _chapters(edition)
    files = {
        "pack": _in_file_order(texts.get("pack", {})),
        "vocabulary": {
            "heading": _in_file_order(texts.get("vocabulary_heading", {})),
            "kinds": Records(
                {
                    "kind": kind.kind,
                    "section_id": kind.section_id,
                    "label": field_pair(kind, "label"),
                    "definition": field_pair(kind, "definition"),
                }
                for kind in kinds
            ),
        },
        "chapters": chapters,
        "references": references,
        "glossary": _section_list(models.GlossaryTerm, edition, "term", "definition"),
        "contract": _contract(edition, _in_file_order(texts.get("contract_heading", {}))),
        "policy_register": _section_list(models.PolicyLine, edition, "term", "detail"),
    }
    for name, filename in CONTENT_FILES.items():
        _write(directory, filename, files[name])
    report(
        f"editions: {len(editions)}, edition {edition.slug}: chapters: {len(chapters)}, "
        f"references: {len(references['references'])}"
    )
