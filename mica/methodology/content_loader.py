"""Loads the methodology's canonical records from content/*.yaml, idempotently.

The YAML has the shape mica.methodology.pack reads; the records are written so
that selectors.pack_content() gives that same shape back.
"""

from pathlib import Path

from django.db import transaction

from mica.content import read_yaml, texts, translated
from mica.errors import ValidationFailed
from mica.methodology import models
from mica.methodology.pack import load_pack_content, validate_content
from mica.methodology.services import claim_text_digest, section_problems

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def _load_editions():
    editions = read_yaml(CONTENT_DIR / "editions.yaml")
    for item in editions:
        models.Edition.objects.update_or_create(
            slug=item["slug"],
            defaults={"status": item["status"], **translated(item, "version_label")},
        )
    return models.Edition.objects.get(slug=editions[-1]["slug"])


def _clear(edition):
    for model in reversed(models.SECTION_MODELS):
        model.objects.filter(edition=edition).delete()


def _create(model, edition, position, **fields):
    return model.objects.create(edition=edition, position=position, **fields)


def _approved_digest(item):
    text = texts(item, "term", "detail")
    return claim_text_digest(text["term_en"], text["detail_en"], text["term_ko"], text["detail_ko"])


def _load_chapters(edition, content):
    chapters = {}
    for position, chapter in enumerate(content["chapters"], start=1):
        record = _create(
            models.Chapter,
            edition,
            position,
            section_id=chapter["section_id"],
            number=chapter["number"],
            body=chapter.get("body", "items"),
            in_pack=chapter.get("in_pack", True),
            **texts(chapter, "title", "lead"),
        )
        chapters[chapter["section_id"]] = record
        for item_position, item in enumerate(chapter.get("items", []), start=1):
            _create(
                models.ChapterItem,
                edition,
                item_position,
                chapter=record,
                section_id=item["section_id"],
                item_type=item["type"],
                kind=item.get("kind", ""),
                state=item.get("state", ""),
                reference_keys=item.get("refs", []),
                link=item.get("link", ""),
                # The owner's Korean rendering is approved as it is loaded.
                korean_approved_digest=_approved_digest(item),
                **texts(item, "term", "detail", optional=("link_label",)),
            )
    return chapters


def _load_references(edition, content, chapters):
    groups = {}
    for position, group in enumerate(content["reference_groups"], start=1):
        groups[group["section_id"]] = _create(
            models.ReferenceGroup,
            edition,
            position,
            section_id=group["section_id"],
            chapter=chapters[group["chapter"]],
            **texts(group, optional=("title", "intro")),
        )
    for position, ref in enumerate(content["references"], start=1):
        _create(
            models.Reference,
            edition,
            position,
            section_id=ref["section_id"],
            key=ref["key"],
            group=groups[ref["group"]],
            url=ref["url"],
            **texts(
                ref, "title", optional=("subtitle", "venue", "borrowed", "not_adopted", "note")
            ),
        )


def _load_contract(edition, content):
    for position, section in enumerate(content["contract"]["sections"], start=1):
        record = _create(
            models.ContractSection,
            edition,
            position,
            section_id=section["section_id"],
            number=section.get("number") or "",
            numbered=section.get("numbered", False),
            **texts(section, "title", optional=("eyebrow", "lead")),
        )
        for item_position, item in enumerate(section["items"], start=1):
            _create(
                models.ContractItem,
                edition,
                item_position,
                contract_section=record,
                section_id=item["section_id"],
                **texts(item, "detail", optional=("term",)),
            )


def _load_lists(edition, content):
    for position, kind in enumerate(content["vocabulary"]["kinds"], start=1):
        _create(
            models.ReadingKind,
            edition,
            position,
            section_id=kind["section_id"],
            kind=kind["kind"],
            **texts(kind, "label", "definition"),
        )
    for position, term in enumerate(content["glossary"], start=1):
        _create(
            models.GlossaryTerm,
            edition,
            position,
            section_id=term["section_id"],
            **texts(term, "term", "definition"),
        )
    for position, line in enumerate(content["policy_register"], start=1):
        _create(
            models.PolicyLine,
            edition,
            position,
            section_id=line["section_id"],
            **texts(line, "term", "detail"),
        )


def load(report):
    edition = _load_editions()
    if edition.status != models.EditionStatus.DRAFT:
        report(f"edition {edition.slug} is published; its records stay as they are")
        return
    content = load_pack_content(CONTENT_DIR)
    problems = validate_content(content)
    if problems:
        raise ValidationFailed("; ".join(problems[:5]))
    with transaction.atomic():
        _clear(edition)
        edition.pack_texts = {
            "pack": content["pack"],
            "vocabulary_heading": content["vocabulary"]["heading"],
            "contract_heading": content["contract"]["heading"],
        }
        edition.save(update_fields=["pack_texts"])
        chapters = _load_chapters(edition, content)
        _load_references(edition, content, chapters)
        _load_contract(edition, content)
        _load_lists(edition, content)
        problems = section_problems(edition)
        if problems:
            raise ValidationFailed("; ".join(problems[:5]))
    report(
        f"editions: 1, chapters: {len(chapters)}, "
        f"references: {models.Reference.objects.filter(edition=edition).count()}"
    )
