"""Every write to the catalogue: versions, reviews, and a task's life (promotion, its
current version, retirement), the last through catalogue.workflows.task_transition."""

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from catalogue.models import LocalReview, ReviewState, TaskDefinition, TaskVersion
from catalogue.rules import require_author_for, task_version_hash
from catalogue.workflows import review_transition, task_transition
from mica.errors import InvalidTransition


def task_version_touch(*, version, actor=None):
    """Record an edit of a version: new hash, the editor noted, stale approvals voided."""
    new_hash = task_version_hash(version)
    if new_hash == version.content_hash:
        return version
    with transaction.atomic():
        TaskVersion.objects.filter(pk=version.pk).update(content_hash=new_hash)
        version.content_hash = new_hash
        if getattr(actor, "pk", None):
            version.editors.add(actor)
        stale = version.reviews.filter(state=ReviewState.APPROVED).exclude(approved_hash=new_hash)
        for review in stale:
            review_transition(
                review_id=review.pk, action="void", reason=_("The version changed after approval.")
            )
    return version


def task_version_load_current(*, version):
    """The canonical content's version of a task that has none in force yet: the seed
    stands behind it, as loaded. Every later change goes through task_version_make_current."""
    TaskDefinition.objects.filter(pk=version.definition_id, current_version=None).update(
        current_version=version
    )


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
