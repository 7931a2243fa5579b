"""Writes and rules of the methodology records."""

from django.utils.translation import gettext as _
from modeltranslation.translator import translator

from mica.errors import ValidationFailed
from mica.methodology import models
from mica.methodology.pack import PLACEHOLDERS, unknown_placeholders


def require_draft(edition):
    if edition.status != models.EditionStatus.DRAFT:
        raise ValidationFailed(
            _("Edition %(edition)s is published and cannot change; changes go into a new edition.")
            % {"edition": edition}
        )


def placeholder_errors(record):
    """{field: [message]} for every translated text that names an unknown live figure."""
    errors = {}
    fields = translator.get_options_for_model(type(record)).fields
    for name in fields:
        for lang in ("en", "ko"):
            unknown = unknown_placeholders(getattr(record, f"{name}_{lang}", "") or "")
            if unknown:
                errors[f"{name}_{lang}"] = [
                    _("Unknown placeholder %(names)s. Known placeholders: %(known)s.")
                    % {
                        "names": ", ".join("{{" + n + "}}" for n in unknown),
                        "known": ", ".join(sorted(PLACEHOLDERS)),
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


def section_record_errors(record):
    """Every rule a methodology record must meet before it is saved."""
    errors = placeholder_errors(record)
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
