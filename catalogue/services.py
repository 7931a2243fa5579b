"""Every write to the catalogue: versions, reviews, and a task's life (promotion, its
current version, retirement), the last through catalogue.workflows.task_transition."""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from catalogue.access import holdout_access
from catalogue.models import (
    LocalReview,
    ReviewComment,
    ReviewState,
    TaskDefinition,
    TaskVersion,
)
from catalogue.rules import (
    require_author_for,
    require_participant_in,
    task_version_hash,
)
from catalogue.workflows import review_transition, task_transition
from mica.content.rows import rows_named
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.methodology.selectors import edition_current
from mica.methodology.services import section_id_owner

# A reason the portal writes on a review it voids: stored as written here (English) and
# translated when read, so the Korean admin shows it in Korean (catalogue.admin).
VERSION_CHANGED_REASON = gettext_noop("The version changed after approval.")
PORTAL_REVIEW_REASONS = {VERSION_CHANGED_REASON}


def task_version_touch(*, version, actor=None):
    """Record an edit of a version: new hash, the editor noted, stale approvals voided.

    The reviews it voided are left on the version as `reviews_voided`, for the editor
    to be told what to do next."""
    version.reviews_voided = []
    new_hash = task_version_hash(version)
    if new_hash == version.content_hash:
        return version
    with transaction.atomic():
        TaskVersion.objects.filter(pk=version.pk).update(content_hash=new_hash)
        rows_named(TaskVersion, [version])
        version.content_hash = new_hash
        if getattr(actor, "pk", None):
            version.editors.add(actor)
        stale = version.reviews.filter(state=ReviewState.APPROVED).exclude(approved_hash=new_hash)
        for review in stale.select_related("market"):
            review_transition(review_id=review.pk, action="void", reason=VERSION_CHANGED_REASON)
            version.reviews_voided.append(review)
    return version


def task_version_load_current(*, version):
    """The canonical content's version of a task that has none in force yet: the seed
    stands behind it, as loaded. Every later change goes through task_version_make_current."""
    TaskDefinition.objects.filter(pk=version.definition_id, current_version=None).update(
        current_version=version
    )
    rows_named(TaskDefinition, [version.definition])


def task_promote(*, definition_id, actor, version_id=None):
    """Candidate to validated, judged on `version_id` (the current version unless named)."""
    return task_transition(
        definition_id=definition_id, action="promote", actor=actor, version_id=version_id
    )


def task_version_make_current(*, version_id, actor):
    """The version the public page shows: only of a validated task, and only a version
    that meets every rule of validation (approved local reviews under four eyes included)."""
    definition_id = TaskVersion.objects.values_list("definition_id", flat=True).get(pk=version_id)
    return task_transition(
        definition_id=definition_id, action="make_current", actor=actor, version_id=version_id
    )


def task_retire(*, definition_id, actor, reason):
    """Out of the public catalogue for good, with the reason; its versions and history stay."""
    return task_transition(definition_id=definition_id, action="retire", actor=actor, reason=reason)


def review_open(*, version, market, actor):
    """Start the local review of a version in a market; one open review at a time."""
    review = LocalReview(version=version, market=market, author=actor)
    require_author_for(review, actor)
    try:
        with transaction.atomic():
            review.save()
    except IntegrityError as clash:
        raise InvalidTransition(
            _("This version already has an open review in %(market)s.") % {"market": market.code}
        ) from clash
    return review


# --- Review comments ------------------------------------------------------------


# What a comment may be anchored to besides a section id: the parts of a task version a
# reviewer approves (the keys of rules.task_version_content but the task's identity).
REVIEW_ANCHOR_FIELDS = (
    "title",
    "final_state",
    "confirmation_boundary",
    "idempotency",
    "evidence_requirements",
    "surface",
    "termination_class",
    "declared_complexity",
    "diagnostic_axes",
    "locality_conditions",
    "parameter_schema",
    "references",
    "clauses",
    "applicability",
)


def review_anchor_error(anchor):
    """Why `anchor` names neither a field of the version nor a section id, or None."""
    if anchor in REVIEW_ANCHOR_FIELDS:
        return None
    edition = edition_current()
    if edition is not None and section_id_owner(edition, anchor) is not None:
        return None
    return _("“%(anchor)s” is neither a field of the task version nor a section id.") % {
        "anchor": anchor
    }


def _require_visible(review, actor):
    # A holdout review does not exist for a person without the capability: the same
    # refusal a missing one gets.
    if review.version.definition.task_set == "holdout" and not holdout_access(actor):
        raise PermissionRefused(_("There is no such review."))


def review_comment_check(*, review, anchor, body, actor):
    """Refuse a comment the rules do not allow: who may comment, what it is anchored to."""
    anchor, body = (anchor or "").strip(), (body or "").strip()
    _require_visible(review, actor)
    require_participant_in(review, actor)
    errors = {}
    problem = review_anchor_error(anchor)
    if problem:
        errors["anchor"] = [problem]
    if not body:
        errors["body"] = [_("Write the comment.")]
    if errors:
        message = " ".join(m for messages in errors.values() for m in messages)
        raise ValidationFailed(message, field_errors=errors)
    return anchor, body


def review_comment_add(*, review, anchor, body, actor):
    """A comment on a review, anchored to a field of the version or a section id."""
    anchor, body = review_comment_check(review=review, anchor=anchor, body=body, actor=actor)
    return ReviewComment.objects.create(review=review, anchor=anchor, body=body, author=actor)


def review_comment_resolve_check(*, comment, actor):
    _require_visible(comment.review, actor)
    require_participant_in(comment.review, actor)
    if comment.resolved:
        raise InvalidTransition(_("This comment is already resolved."))


def review_comment_resolve(*, comment_id, actor):
    """Mark a comment resolved; it stays in the record with who resolved it and when."""
    with transaction.atomic():
        comment = (
            ReviewComment.objects.select_for_update()
            .select_related("review__version__definition", "review__market")
            .get(pk=comment_id)
        )
        review_comment_resolve_check(comment=comment, actor=actor)
        comment.resolved_at = timezone.now()
        comment.resolved_by = actor
        comment.save()
    return comment


# --- Frozen versions --------------------------------------------------------------------


def task_versions_freeze(snapshot):
    """Fix for good the versions a published edition's catalogue holds (its snapshot's
    slug and version pairs): cited by an edition, a text never changes under its number."""
    held = {(entry["slug"], entry["version"]) for entry in snapshot}
    rows = TaskVersion.objects.filter(
        definition__slug__in={slug for slug, _version in held}, frozen_at=None
    ).values_list("pk", "definition__slug", "version")
    keys = [pk for pk, slug, number in rows if (slug, number) in held]
    TaskVersion.objects.filter(pk__in=keys).update(frozen_at=timezone.now())


def _next_free_number(version):
    """The next minor number after `version`'s that its task has not used: 1.0.0 -> 1.1.0."""
    major, minor, _patch = (int(part) for part in version.version.split("."))
    taken = set(version.definition.versions.values_list("version", flat=True))
    while f"{major}.{minor}.0" in taken:
        minor += 1
    return f"{major}.{minor}.0"


def task_version_start_next(*, version_id, actor):
    """A draft copied from a version (its texts, clauses and applicability) under the next
    free number: how a frozen version's text is changed, through local review again."""
    with transaction.atomic():
        source = TaskVersion.objects.select_related("definition").get(pk=version_id)
        if source.definition.task_set == "holdout" and not holdout_access(actor):
            raise PermissionRefused(_("There is no such task version."))
        clauses = list(source.clauses.all())
        applicability = list(source.applicability.all())
        draft = TaskVersion.objects.get(pk=version_id)
        draft.pk = draft.id = None
        draft.version = _next_free_number(source)
        draft.frozen_at = None
        draft._state.adding = True
        draft.save()
        for part in (*clauses, *applicability):
            part.pk = part.id = None
            part.version = draft
            part._state.adding = True
            part.save()
        return task_version_touch(version=draft, actor=actor)
