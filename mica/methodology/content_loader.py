"""Loads the methodology's canonical records from content/*.yaml into a draft edition.

The YAML has the shape mica.methodology.pack reads; the records are written so
that selectors.pack_content() gives that same shape back. Each record goes
through `CanonicalLoad.record`, so an edited record is never overwritten.
"""

from pathlib import Path

from mica.bilingual import LANGUAGES
from mica.content.loading import read_yaml, texts, translated
from mica.errors import ValidationFailed
from mica.methodology import models
from mica.methodology.pack import load_pack_content, validate_content
from mica.methodology.selectors import claim_text_digest
from mica.methodology.services import section_problems

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def _load_editions(canonical, content, directory):
    """The editions of the file; the last one is the one its records load into."""
    pack_texts = {
        "pack": content["pack"],
        "vocabulary_heading": content["vocabulary"]["heading"],
        "contract_heading": content["contract"]["heading"],
    }
    edition = None
    for item in read_yaml(directory / "editions.yaml"):
        edition = models.Edition.objects.filter(slug=item["slug"]).first()
        if edition and edition.status != models.EditionStatus.DRAFT:
            continue  # published: immutable, changes ship as a new edition
        edition, _outcome = canonical.record(
            models.Edition,
            item["slug"],
            {"slug": item["slug"]},
            {**translated(item, "version_label"), "pack_texts": pack_texts},
            # Publishing moves the status; a load never moves it back.
            on_create={"status": item["status"], "review_cutoff": item.get("review_cutoff")},
            existing=edition,
        )
        _load_review_cutoff(canonical, edition, item)
    return edition


def _load_review_cutoff(canonical, edition, item):
    """The review cutoff as a record of its own: a database loaded before the file named
    one gets it (the field is still empty), and a cutoff an editor set is kept."""
    if item.get("review_cutoff"):
        canonical.record(
            models.Edition,
            f"{item['slug']}/review-cutoff",
            {"slug": item["slug"]},
            {"review_cutoff": item["review_cutoff"]},
            existing=edition,
        )


def _section(canonical, model, edition, position, section_id, **fields):
    record, _outcome = canonical.record(
        model,
        f"{edition.slug}/{section_id}",
        {"edition": edition, "section_id": section_id},
        {"position": position, **fields},
    )
    return record


def _approved_digest(item):
    text = texts(item, "term", "detail")
    return claim_text_digest(text["term_en"], text["detail_en"], text["term_ko"], text["detail_ko"])


def _load_chapters(canonical, edition, content):
    chapters = {}
    for position, chapter in enumerate(content["chapters"], start=1):
        record = _section(
            canonical,
            models.Chapter,
            edition,
            position,
            chapter["section_id"],
            number=chapter["number"],
            body=chapter.get("body", "items"),
            in_pack=chapter.get("in_pack", True),
            **texts(chapter, "title", "lead"),
        )
        chapters[chapter["section_id"]] = record
        for item_position, item in enumerate(chapter.get("items", []), start=1):
            _section(
                canonical,
                models.ChapterItem,
                edition,
                item_position,
                item["section_id"],
                chapter=record,
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


# The cited work's bibliographic data (references.yaml "cite"): model fields in file order.
CITATION_FIELDS = (
    "work_type",
    "work_title",
    "authors",
    "organisation_authors",
    "issued",
    "container_title",
    "publisher",
    "volume",
    "issue",
    "page",
    "number",
    "accessed_on",
)
# Lists in the file, one name a line in the record: a name may hold a comma
# ("Family, Given"), never a line break.
CITATION_LISTS = frozenset({"authors", "organisation_authors"})


def citation_fields(ref):
    """The model fields of a reference's "cite" mapping; an absent value is empty."""
    cite = ref.get("cite") or {}
    fields = {}
    for name in CITATION_FIELDS:
        value = cite.get(name)
        if name in CITATION_LISTS:
            fields[name] = "\n".join(value or [])
        elif name == "accessed_on":
            fields[name] = value
        else:
            # An unquoted 2024 or 2023-10-05 reads as a number or a date.
            fields[name] = "" if value is None else str(value)
    return fields


def _load_references(canonical, edition, content, chapters):
    groups = {}
    for position, group in enumerate(content["reference_groups"], start=1):
        groups[group["section_id"]] = _section(
            canonical,
            models.ReferenceGroup,
            edition,
            position,
            group["section_id"],
            chapter=chapters[group["chapter"]],
            **texts(group, optional=("title", "intro")),
        )
    for position, ref in enumerate(content["references"], start=1):
        _section(
            canonical,
            models.Reference,
            edition,
            position,
            ref["section_id"],
            key=ref["key"],
            group=groups[ref["group"]],
            url=ref["url"],
            **citation_fields(ref),
            **texts(
                ref, "title", optional=("subtitle", "venue", "borrowed", "not_adopted", "note")
            ),
        )


def numbered_pair(section):
    """`numbered: true` numbers a section's items in both languages; `{en: …, ko: …}`
    in each language as it says."""
    numbered = section.get("numbered", False)
    if not isinstance(numbered, dict):
        numbered = dict.fromkeys(LANGUAGES, numbered)
    return {f"numbered_{lang}": bool(numbered.get(lang, False)) for lang in LANGUAGES}


def _load_contract(canonical, edition, content):
    for position, section in enumerate(content["contract"]["sections"], start=1):
        record = _section(
            canonical,
            models.ContractSection,
            edition,
            position,
            section["section_id"],
            number=section.get("number") or "",
            **numbered_pair(section),
            **texts(section, "title", optional=("eyebrow", "lead")),
        )
        for item_position, item in enumerate(section["items"], start=1):
            _section(
                canonical,
                models.ContractItem,
                edition,
                item_position,
                item["section_id"],
                contract_section=record,
                **texts(item, "detail", optional=("term",)),
            )


def _load_lists(canonical, edition, content):
    for position, kind in enumerate(content["vocabulary"]["kinds"], start=1):
        _section(
            canonical,
            models.ReadingKind,
            edition,
            position,
            kind["section_id"],
            kind=kind["kind"],
            **texts(kind, "label", "definition"),
        )
    for position, term in enumerate(content["glossary"], start=1):
        _section(
            canonical,
            models.GlossaryTerm,
            edition,
            position,
            term["section_id"],
            **texts(term, "term", "definition"),
        )
    for position, line in enumerate(content["policy_register"], start=1):
        _section(
            canonical,
            models.PolicyLine,
            edition,
            position,
            line["section_id"],
            **texts(line, "term", "detail"),
        )


def load(canonical):
    directory = canonical.directory(CONTENT_DIR)
    content = load_pack_content(directory)
    problems = validate_content(content)
    if problems:
        raise ValidationFailed("; ".join(problems[:5]))
    edition = _load_editions(canonical, content, directory)
    if edition.status != models.EditionStatus.DRAFT:
        canonical.report(f"edition {edition.slug} is published; its records stay as they are")
        return
    chapters = _load_chapters(canonical, edition, content)
    _load_references(canonical, edition, content, chapters)
    _load_contract(canonical, edition, content)
    _load_lists(canonical, edition, content)
    problems = section_problems(edition)
    if problems:
        raise ValidationFailed("; ".join(problems[:5]))
