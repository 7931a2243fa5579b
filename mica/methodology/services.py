"""Writes and rules of the methodology records."""

import re

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from modeltranslation.translator import translator

from mica.bilingual import LANGUAGES
from mica.content.models import PublicationKind
from mica.content.publication_log import publication_log_append, sha256_of
from mica.errors import PermissionRefused, ValidationFailed
from mica.methodology import models
from mica.methodology.extensions import (
    catalogue_freeze,
    catalogue_snapshot,
    edition_commitments,
    edition_drafted,
    frozen_counts_registered,
    publication_checks_registered,
)
from mica.methodology.pack import CONDITIONS, PLACEHOLDERS, unknown_placeholders
from mica.methodology.selectors import claim_digest, claim_korean_is_approved, language_competent


def require_draft(edition):
    if edition.status != models.EditionStatus.DRAFT:
        raise ValidationFailed(
            _("Edition %(edition)s is published and cannot change; changes go into a new edition.")
            % {"edition": edition}
        )


def placeholder_errors(record, figures=PLACEHOLDERS, conditions=CONDITIONS):
    """{field: [message]} for every translated text that names an unknown live figure
    (one not in ``figures``, or a state not in ``conditions``)."""
    errors = {}
    fields = translator.get_options_for_model(type(record)).fields
    for name in fields:
        for lang in LANGUAGES:
            text = getattr(record, f"{name}_{lang}", "") or ""
            unknown = unknown_placeholders(text, figures, conditions)
            if unknown:
                errors[f"{name}_{lang}"] = [
                    _("Unknown placeholder %(names)s. Known placeholders: %(known)s.")
                    % {
                        "names": ", ".join("{{" + n + "}}" for n in unknown),
                        "known": ", ".join(sorted(figures)),
                    }
                ]
    return errors


def section_id_owner(edition, section_id, exclude=None):
    """The record already using a section id in the edition (any kind), if any."""
    for model in models.SECTION_MODELS:
        found = model.objects.filter(edition=edition, section_id=section_id)
        if exclude is not None and isinstance(exclude, model):
            found = found.exclude(pk=exclude.pk)
        if found.exists():
            return found.first()
    return None


# Where a kind of work appears, which a citation cannot do without: a paper's
# proceedings or journal; a book's, report's or preprint's publisher (for a preprint,
# the archive that holds it).
CONTAINER_REQUIRED = frozenset({models.WorkType.CONFERENCE_PAPER, models.WorkType.JOURNAL_ARTICLE})
PUBLISHER_REQUIRED = frozenset(
    {models.WorkType.BOOK, models.WorkType.REPORT, models.WorkType.PREPRINT}
)


def reference_citation_errors(reference):
    """What a reference lacks to be cited: {field: [message]}, empty when citable.

    A citation names who is responsible for the work (people or an organisation), when
    it was issued, and where it appeared. A living web page that names no date is cited
    undated with the date it was read, as citation styles print it ("n.d.").
    """
    errors = {}
    if not reference.work_type:
        errors["work_type"] = [_("Say what kind of work this is.")]
    if not (reference.authors.strip() or reference.organisation_authors.strip()):
        errors["authors"] = [_("Name the authors, or the organisation the work is issued by.")]
    undated_page = reference.work_type == models.WorkType.WEB_PAGE and reference.accessed_on
    if not reference.issued and not undated_page:
        errors["issued"] = [
            _("Give the date the work was issued; an undated web page needs its access date.")
        ]
    if reference.work_type in CONTAINER_REQUIRED and not reference.container_title:
        errors["container_title"] = [_("Name the proceedings or journal the work appeared in.")]
    if reference.work_type in PUBLISHER_REQUIRED and not reference.publisher:
        errors["publisher"] = [_("Name the publisher, or for a preprint the archive holding it.")]
    return errors


def section_record_errors(record):
    """Every rule a methodology record must meet before it is saved."""
    errors = placeholder_errors(record)
    if isinstance(record, models.Reference):
        errors.update(reference_citation_errors(record))
    if record.edition_id and record.section_id:
        owner = section_id_owner(record.edition, record.section_id, exclude=record)
        if owner is not None:
            errors.setdefault("section_id", []).append(
                _("Section id “%(id)s” is already used in this edition by %(owner)s.")
                % {"id": record.section_id, "owner": owner._meta.verbose_name}
            )
        if record.pk:
            previous = (
                type(record)
                .objects.filter(pk=record.pk)
                .values_list("section_id", flat=True)
                .first()
            )
            if (
                previous
                and previous != record.section_id
                and (record.edition.status != models.EditionStatus.DRAFT)
            ):
                errors.setdefault("section_id", []).append(
                    _("A section id never changes once its edition is published.")
                )
    keys = getattr(record, "reference_keys", None)
    if keys:
        known = set(
            models.Reference.objects.filter(edition=record.edition_id).values_list("key", flat=True)
        )
        missing = [key for key in keys if key not in known]
        if missing:
            errors["reference_keys"] = [
                _("No reference with the key %(keys)s exists in this edition.")
                % {"keys": ", ".join(missing)}
            ]
    return errors


def section_problems(edition):
    """Whole-edition check: duplicate section ids across kinds, unknown placeholders."""
    problems, seen = [], {}
    for model in models.SECTION_MODELS:
        for record in model.objects.filter(edition=edition):
            if record.section_id in seen:
                problems.append(f"section id {record.section_id} is used twice")
            seen[record.section_id] = record
            for field, messages in placeholder_errors(record).items():
                problems.extend(f"{record.section_id}.{field}: {m}" for m in messages)
    return problems


# --- Korean approval -----------------------------------------------------------------


# The texts of a claim each side of a translation: the English source, the Korean text.
SOURCE_FIELDS = ("term_en", "detail_en")
TRANSLATION_FIELDS = ("term_ko", "detail_ko")


def last_editors(revisions):
    """(last editor of the English source, last editor of the Korean text) of one claim,
    from its revisions oldest first: the person who saved the revision where that text
    last changed (None where nobody signed in saved it, as a content load does)."""
    source_editor = translation_editor = None
    before = None
    for revision in revisions:
        if before is None or _texts(revision, SOURCE_FIELDS) != _texts(before, SOURCE_FIELDS):
            source_editor = revision.history_user_id
        if before is None or _texts(revision, TRANSLATION_FIELDS) != _texts(
            before, TRANSLATION_FIELDS
        ):
            translation_editor = revision.history_user_id
        before = revision
    return source_editor, translation_editor


def _texts(record, fields):
    return tuple(getattr(record, field) or "" for field in fields)


def claim_last_editors(item):
    """The last editors of a claim's English source and Korean text (one query)."""
    return last_editors(item.history.order_by("history_date", "history_id"))


def require_translation_reviewer(item, actor):
    """Four eyes on a translation: a reviewer competent in Korean who neither last edited
    the English source nor the Korean text under review."""
    if actor is None or not language_competent(actor, "ko"):
        raise PermissionRefused(
            _("Only a reviewer with a current Korean language competence approves a translation.")
        )
    source_editor, translation_editor = claim_last_editors(item)
    if actor.pk == source_editor:
        raise PermissionRefused(
            _("Nobody reviews their own work: you last edited the English source of %(id)s.")
            % {"id": item.section_id}
        )
    if actor.pk == translation_editor:
        raise PermissionRefused(
            _("Nobody reviews their own work: you last edited the Korean text of %(id)s.")
            % {"id": item.section_id}
        )


def claim_korean_approve(*, item, actor):
    """Record that `actor` reviewed the Korean text against the current English source and
    approved it: the digest of both texts, who and when."""
    require_draft(item.edition)
    if not (item.term_ko and item.detail_ko):
        raise ValidationFailed(
            _("Claim %(id)s has no Korean text to approve.") % {"id": item.section_id}
        )
    require_translation_reviewer(item, actor)
    item.korean_approved_digest = claim_digest(item)
    item.korean_approved_by = actor
    item.korean_approved_at = timezone.now()
    item.save(update_fields=["korean_approved_digest", "korean_approved_by", "korean_approved_at"])
    return item


def self_approved_claims(edition):
    """Section ids of the edition's claims whose Korean approval in force was given by the
    last editor of the English source or of the Korean text (one query for the history)."""
    items = {
        item.pk: item
        for item in models.ChapterItem.objects.filter(edition=edition).exclude(
            korean_approved_by=None
        )
        if claim_korean_is_approved(item)
    }
    revisions = {}
    history = models.ChapterItem.history.filter(id__in=list(items)).order_by(
        "history_date", "history_id"
    )
    for revision in history:
        revisions.setdefault(revision.id, []).append(revision)
    return sorted(
        item.section_id
        for pk, item in items.items()
        if item.korean_approved_by_id in last_editors(revisions.get(pk, []))
    )


# --- Editions -----------------------------------------------------------------------


# What a draft's label carries until it is published (publishing takes it off).
DRAFT_MARKS = {"en": " (draft)", "ko": " (초안)"}


# An edition's number is the version its slug ends with: "preview-0.1" is 0.1.
EDITION_NUMBER = re.compile(r"\d+(?:\.\d+)*$")


def _number_after(number):
    """The next edition number: the last part counted on (0.1 -> 0.2, 0.9 -> 0.10, 3 -> 4)."""
    *head, last = number.split(".")
    return ".".join([*head, str(int(last) + 1)])


def _numbered(source, number, new_number):
    """The source's slug and labels with `new_number` for `number` (or added, when the
    slug names no number)."""
    max_length = models.Edition._meta.get_field("slug").max_length
    head, suffix = (
        (source.slug[: -len(number)], new_number) if number else (source.slug, f"-{new_number}")
    )
    slug = head[: max_length - len(suffix)] + suffix
    labels = {}
    for lang in LANGUAGES:
        label = _published_label(getattr(source, f"version_label_{lang}"), lang)
        before, found, after = label.rpartition(number) if number else ("", "", label)
        labels[lang] = f"{before}{new_number}{after}" if found else f"{label} {new_number}"
    return slug, labels


def edition_next_number(source):
    """The slug and labels of the edition after `source`: its number counted on to the
    next one no edition holds ("preview-0.1" and "Preview 0.1" -> "preview-0.2" and
    "Preview 0.2", or 0.3 when 0.2 exists)."""
    taken = set(models.Edition.objects.values_list("slug", flat=True))
    found = EDITION_NUMBER.search(source.slug)
    number = found.group() if found else ""
    candidate = number or "1"
    for _attempt in range(len(taken) + 1):
        candidate = _number_after(candidate)
        slug, labels = _numbered(source, number, candidate)
        if slug not in taken:
            return slug, labels
    raise AssertionError("unreachable: one of len(taken) + 1 numbers is free")


def _draft_label(label, lang):
    mark = DRAFT_MARKS[lang]
    return label if label.endswith(mark) else f"{label}{mark}"


def _published_label(label, lang):
    return label.removesuffix(DRAFT_MARKS[lang])


def edition_start_draft(*, source, slug=None, label_en=None, label_ko=None):
    """A new draft edition holding a copy of every methodology record and market edition.

    Without a slug or labels, it takes the next free edition number after the source
    (edition_next_number), its labels marked as a draft.
    """
    next_slug, next_labels = edition_next_number(source)
    with transaction.atomic():
        draft = models.Edition.objects.create(
            slug=slug or next_slug,
            version_label_en=label_en or _draft_label(next_labels["en"], "en"),
            version_label_ko=label_ko or _draft_label(next_labels["ko"], "ko"),
            pack_texts=source.pack_texts,
            min_eligible_runs=source.min_eligible_runs,
            min_coverage=source.min_coverage,
            runs_per_task=source.runs_per_task,
            max_ineligible_discard_rate=source.max_ineligible_discard_rate,
        )
        chapters, groups, sections = {}, {}, {}
        for model in models.SECTION_MODELS:
            for record in model.objects.filter(edition=source).order_by("pk"):
                old_pk = record.pk
                record.pk = None
                record.edition = draft
                if model is models.ChapterItem or model is models.ReferenceGroup:
                    record.chapter = chapters[record.chapter_id]
                if model is models.Reference:
                    record.group = groups[record.group_id]
                if model is models.ContractItem:
                    record.contract_section = sections[record.contract_section_id]
                record.save()
                {
                    models.Chapter: chapters,
                    models.ReferenceGroup: groups,
                    models.ContractSection: sections,
                }.get(model, {})[old_pk] = record
        edition_drafted.send(sender=models.Edition, source=source, draft=draft)
    return draft


def edition_draft_following(source):
    """The draft already started after `source` (the newest), if one is still a draft."""
    drafts = models.Edition.objects.filter(status=models.EditionStatus.DRAFT, pk__gt=source.pk)
    return drafts.order_by("-pk").first()


def edition_draft_start_or_open(*, source):
    """(draft, started): the draft that follows `source`, started now only when none is
    under way, so a second "Start a new draft" opens the first one instead of another."""
    with transaction.atomic():
        # Two clicks at once: the second waits for the first's draft, then opens it.
        models.Edition.objects.select_for_update().filter(pk=source.pk).first()
        existing = edition_draft_following(source)
        if existing is not None:
            return existing, False
        return edition_start_draft(source=source), True


def edition_publication_refusals(edition):
    """Every reason the edition cannot be published yet; empty when it can."""
    refusals = []
    for item in models.ChapterItem.objects.filter(edition=edition):
        if not (item.term_ko and item.detail_ko):
            refusals.append(
                _("Claim %(id)s has no Korean text for its English source.")
                % {"id": item.section_id}
            )
        elif not claim_korean_is_approved(item):
            refusals.append(
                _("The Korean text of claim %(id)s is not approved for its current English source.")
                % {"id": item.section_id}
            )
    for section_id in self_approved_claims(edition):
        refusals.append(
            _(
                "The Korean text of claim %(id)s was approved by the person who last edited "
                "it or its English source: another reviewer must approve it."
            )
            % {"id": section_id}
        )
    # Corrections incorporated, the gate's dry run: checked by the apps that own them.
    for check in publication_checks_registered():
        refusals.extend(check(edition))
    return refusals


def edition_publication_preview(edition):
    """What publishing freezes, as (label, count) rows, and every check that refuses it."""
    frozen = [
        (model._meta.verbose_name_plural, model.objects.filter(edition=edition).count())
        for model in models.SECTION_MODELS
    ]
    frozen.extend(count(edition) for count in frozen_counts_registered())
    return frozen, edition_publication_refusals(edition)


def edition_task_catalogue(edition):
    """The tasks of an edition: frozen at publication, live while it is a draft."""
    if edition.status == models.EditionStatus.DRAFT:
        return catalogue_snapshot()
    return edition.catalogue_snapshot


def edition_freeze_catalogue(edition):
    """Freeze the live catalogue into an edition published as canonical content is loaded."""
    snapshot = catalogue_snapshot()
    models.Edition.objects.filter(pk=edition.pk).update(catalogue_snapshot=snapshot)
    catalogue_freeze(snapshot)


def edition_publish(*, edition_id, actor):
    if not (actor and actor.is_superuser):
        raise PermissionRefused(_("Only the method lead publishes an edition."))
    with transaction.atomic():
        edition = models.Edition.objects.select_for_update().get(pk=edition_id)
        require_draft(edition)
        refusals = edition_publication_refusals(edition)
        if refusals:
            raise ValidationFailed(
                _("The edition cannot be published yet."), field_errors={"edition": refusals}
            )
        models.Edition.objects.filter(status=models.EditionStatus.PUBLISHED).update(
            status=models.EditionStatus.SUPERSEDED
        )
        edition.status = models.EditionStatus.PUBLISHED
        edition.published_on = timezone.localdate()
        edition.version_label_en = _published_label(edition.version_label_en, "en")
        edition.version_label_ko = _published_label(edition.version_label_ko, "ko")
        edition.catalogue_snapshot = catalogue_snapshot()
        edition.save()
        catalogue_freeze(edition.catalogue_snapshot)
        _edition_logged(edition)
    return edition


def _edition_logged(edition):
    """The edition's entry in the publication log, in the transaction that publishes it."""
    subject = {
        "slug": edition.slug,
        "label": {"en": edition.version_label_en, "ko": edition.version_label_ko},
        "published_on": edition.published_on.isoformat(),
        "catalogue_sha256": sha256_of(edition.catalogue_snapshot),
        # One commitment per holdout task, sorted and unnamed (catalogue.commitments).
        "holdout_commitments": edition_commitments(edition),
    }
    publication_log_append(kind=PublicationKind.EDITION, subject=subject)
