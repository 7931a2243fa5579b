"""Reads of the methodology: the current edition, its records as the pack's dict, live facts."""

import hashlib

from django.db.models import Prefetch
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from mica.bilingual import field_pair
from mica.methodology import models
from mica.methodology.extensions import corrections_by_section
from mica.methodology.models import Edition, EditionStatus


def edition_current():
    """The edition the public reads: the newest published, else the newest draft."""
    return _edition_current(Edition.objects.all())


def edition_stamp():
    """The current edition as every page's shell names it, without its pack texts and
    catalogue snapshot: a published edition of ten thousand tasks holds megabytes there,
    and the shell's kept copy was decoded again for each of twenty thousand pages."""
    return _edition_current(Edition.objects.defer("pack_texts", "catalogue_snapshot"))


def _edition_current(editions):
    editions = editions.order_by("-published_on", "-pk")
    return (
        editions.filter(status=EditionStatus.PUBLISHED).first()
        or editions.filter(status=EditionStatus.DRAFT).first()
    )


def claim_text_digest(term_en, detail_en, term_ko, detail_ko):
    """SHA-256 of a claim's English source and Korean text together."""
    joined = "\x1f".join([term_en or "", detail_en or "", term_ko or "", detail_ko or ""])
    return hashlib.sha256(joined.encode()).hexdigest()


def claim_digest(item):
    return claim_text_digest(item.term_en, item.detail_en, item.term_ko, item.detail_ko)


def claim_korean_is_approved(item):
    return bool(item.korean_approved_digest) and item.korean_approved_digest == claim_digest(item)


def claims_korean_stale():
    """Claims of the draft editions whose Korean text was approved, then either side was
    edited: the approval no longer covers what a reader would see."""
    approved = (
        models.ChapterItem.objects.filter(edition__status=EditionStatus.DRAFT)
        .exclude(korean_approved_digest="")
        .only("pk", "korean_approved_digest", "term_en", "detail_en", "term_ko", "detail_ko")
    )
    return [item.pk for item in approved if not claim_korean_is_approved(item)]


def edition_list():
    return Edition.objects.order_by("-published_on", "-pk")


def edition_get(slug):
    return Edition.objects.get(slug=slug)


def _optional(record, name):
    value = field_pair(record, name)
    return value if any(value.values()) else None


def _drop_none(mapping):
    return {k: v for k, v in mapping.items() if v is not None}


def _chapter_item(item, corrections=()):
    base = {
        "section_id": item.section_id,
        "type": item.item_type,
        "term": field_pair(item, "term"),
        "detail": field_pair(item, "detail"),
    }
    if item.item_type == models.ItemType.CLAIM:
        base.update(kind=item.kind, refs=list(item.reference_keys))
        if corrections:
            base["corrections"] = [
                {"date": c.decided_on.isoformat(), "text": field_pair(c, "text")}
                for c in corrections
            ]
    elif item.item_type == models.ItemType.STATUS:
        base.update(state=item.state)
    elif item.link:
        base.update(link=item.link, link_label=_optional(item, "link_label"))
    return _drop_none(base)


def chapter_list(edition):
    items = models.ChapterItem.objects.order_by("position", "pk")
    return (
        models.Chapter.objects.filter(edition=edition)
        .order_by("position", "pk")
        .prefetch_related(Prefetch("items", queryset=items))
    )


def reference_list(edition):
    return (
        models.Reference.objects.filter(edition=edition)
        .select_related("group", "group__chapter")
        .order_by("position", "pk")
    )


def reference_citations(edition):
    """{key: (the names a citation leads with, the year or None)} of the edition's
    references: the family names of the authors ("Family, Given"), or the organisations
    a work is issued by."""
    citations = {}
    for key, authors, organisations, issued in models.Reference.objects.filter(
        edition=edition
    ).values_list("key", "authors", "organisation_authors", "issued"):
        people = [line.split(",")[0].strip() for line in authors.splitlines() if line.strip()]
        names = people or [line.strip() for line in organisations.splitlines() if line.strip()]
        citations[key] = (names, issued[:4] or None)
    return citations


def glossary_list(edition):
    return models.GlossaryTerm.objects.filter(edition=edition).order_by("position", "pk")


def pack_content(edition):
    """The edition's records in the dict shape mica.methodology.pack renders."""
    chapters = list(chapter_list(edition))
    corrections = corrections_by_section(edition)
    groups = models.ReferenceGroup.objects.filter(edition=edition).select_related("chapter")
    contract = models.ContractSection.objects.filter(edition=edition).prefetch_related(
        Prefetch("items", queryset=models.ContractItem.objects.order_by("position", "pk"))
    )
    texts = edition.pack_texts or {}
    return {
        "pack": texts.get("pack", {}),
        "vocabulary": {
            "heading": texts.get("vocabulary_heading", {}),
            "kinds": [
                {
                    "kind": k.kind,
                    "section_id": k.section_id,
                    "label": field_pair(k, "label"),
                    "definition": field_pair(k, "definition"),
                }
                for k in models.ReadingKind.objects.filter(edition=edition)
            ],
        },
        "chapters": [
            _drop_none(
                {
                    "number": c.number,
                    "section_id": c.section_id,
                    "title": field_pair(c, "title"),
                    "lead": field_pair(c, "lead"),
                    "body": c.body,
                    "in_pack": c.in_pack,
                    "items": [
                        _chapter_item(i, corrections.get(i.section_id, ())) for i in c.items.all()
                    ],
                }
            )
            for c in chapters
        ],
        "reference_groups": [
            _drop_none(
                {
                    "section_id": g.section_id,
                    "chapter": g.chapter.section_id,
                    "title": _optional(g, "title"),
                    "intro": _optional(g, "intro"),
                }
            )
            for g in groups.order_by("position", "pk")
        ],
        "references": [
            _drop_none(
                {
                    "key": r.key,
                    "section_id": r.section_id,
                    "group": r.group.section_id,
                    "title": field_pair(r, "title"),
                    "subtitle": _optional(r, "subtitle"),
                    "url": r.url,
                    "venue": _optional(r, "venue"),
                    "borrowed": _optional(r, "borrowed"),
                    "not_adopted": _optional(r, "not_adopted"),
                    "note": _optional(r, "note"),
                }
            )
            for r in reference_list(edition)
        ],
        "glossary": [
            {
                "section_id": g.section_id,
                "term": field_pair(g, "term"),
                "definition": field_pair(g, "definition"),
            }
            for g in glossary_list(edition)
        ],
        "contract": {
            "heading": texts.get("contract_heading", {}),
            "sections": [
                _drop_none(
                    {
                        "section_id": s.section_id,
                        "number": s.number or None,
                        "title": field_pair(s, "title"),
                        "eyebrow": _optional(s, "eyebrow"),
                        "lead": _optional(s, "lead"),
                        "numbered": field_pair(s, "numbered", bool),
                        "items": [
                            _drop_none(
                                {
                                    "section_id": i.section_id,
                                    "term": _optional(i, "term"),
                                    "detail": field_pair(i, "detail"),
                                }
                            )
                            for i in s.items.all()
                        ],
                    }
                )
                for s in contract.order_by("position", "pk")
            ],
        },
        "policy_register": [
            {
                "section_id": p.section_id,
                "term": field_pair(p, "term"),
                "detail": field_pair(p, "detail"),
            }
            for p in models.PolicyLine.objects.filter(edition=edition)
        ],
    }


def _short(text, words=12):
    return Truncator(" ".join((text or "").split())).words(words)


def _section_group(label, records, text):
    return (label, [(r.section_id, f"{_short(text(r))} ({r.section_id})") for r in records])


def section_outline(edition):
    """Every section id of `edition` as a person chooses one from a list: [(group label,
    [(section id, label)])], each chapter with its items in reading order, then the
    operational contract, the policy register, the glossary, the references and the
    reading vocabulary. Labels are in the active language."""
    if edition is None:
        return []
    groups = []
    for chapter in chapter_list(edition):
        heading = f"{chapter.number}. {chapter.title}"
        groups.append(
            (heading, [(chapter.section_id, f"{_short(heading)} ({chapter.section_id})")])
        )
        groups[-1][1].extend(_section_group("", chapter.items.all(), lambda i: i.term)[1])
    of_edition = {"edition": edition}
    contract = models.ContractSection.objects.filter(**of_edition).order_by("position", "pk")
    for section in contract.prefetch_related(
        Prefetch("items", queryset=models.ContractItem.objects.order_by("position", "pk"))
    ):
        heading = " ".join(filter(None, [section.number, section.title]))
        groups.append(
            (heading, [(section.section_id, f"{_short(heading)} ({section.section_id})")])
        )
        groups[-1][1].extend(
            _section_group("", section.items.all(), lambda i: i.term or i.detail)[1]
        )
    ordered = ("position", "pk")
    for label, model, text in (
        (_("Policy register"), models.PolicyLine, lambda r: r.term),
        (_("Glossary"), models.GlossaryTerm, lambda r: r.term),
        (_("Reference groups"), models.ReferenceGroup, lambda r: r.title or r.section_id),
        (_("References"), models.Reference, lambda r: r.title),
        (_("Reading kinds"), models.ReadingKind, lambda r: r.label),
    ):
        records = model.objects.filter(**of_edition).order_by(*ordered)
        group = _section_group(label, records, text)
        if group[1]:
            groups.append(group)
    return groups


def section_record_get(edition, section_id):
    """The record behind a section id in an edition, whatever its kind, or None."""
    for model in models.SECTION_MODELS:
        record = model.objects.filter(edition=edition, section_id=section_id).first()
        if record is not None:
            return record
    return None


def language_competent(user, language):
    """Whether the user holds a competence in the language valid today."""
    if not user.is_authenticated:
        return False
    return models.LanguageCompetence.objects.filter(
        user=user, language=language, valid_until__gte=timezone.localdate()
    ).exists()
