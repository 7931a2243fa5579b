"""Every write to the catalogue: versions, reviews, promotion."""

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from catalogue.models import (
    ClauseKind,
    Lifecycle,
    LocalReview,
    ReviewState,
    TaskDefinition,
    TaskVersion,
)
from catalogue.rules import require_author_for, task_version_hash
from catalogue.workflows import review_transition
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.vocabulary import MARKET_ORDER


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


def task_version_make_current(*, version):
    TaskDefinition.objects.filter(pk=version.definition_id).update(current_version=version)


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


# --- Promotion ----------------------------------------------------------------


def _design_gaps(version):
    fields = [
        ("surface", _("surface")),
        ("termination_class", _("termination class")),
        ("declared_complexity", _("declared complexity")),
        ("diagnostic_axes", _("diagnostic axes")),
    ]
    gaps = [
        _("missing %(field)s") % {"field": label}
        for name, label in fields
        if not getattr(version, name)
    ]
    return gaps


def _applicability_gaps(version, applicability):
    if not applicability:
        return [_("missing market applicability")]
    gaps = []
    codes = [a.market.code for a in applicability]
    for code in sorted(set(c for c in codes if codes.count(c) > 1)):
        gaps.append(_("market applicability repeats %(market)s") % {"market": code})
    for code in MARKET_ORDER:
        if code not in codes:
            gaps.append(_("market applicability omits %(market)s") % {"market": code})
    return gaps


def _reference_gaps(version):
    if version.reference_status != "registered":
        return [_("speed and cost references are still calibration-pending")]
    return []


def _contract_gaps(version):
    kinds = {clause.kind for clause in version.clauses.all()}
    labels = {
        ClauseKind.OBLIGATION: _("obligations"),
        ClauseKind.INVARIANT: _("invariants"),
        ClauseKind.PROHIBITED: _("prohibited states"),
    }
    return [
        _("the contract has no %(part)s") % {"part": labels[kind]}
        for kind in ClauseKind
        if kind not in kinds
    ]


def _review_gaps(version, applicable_codes):
    approved = {
        review.market.code
        for review in version.reviews.filter(state=ReviewState.APPROVED).select_related("market")
        if review.approved_hash == task_version_hash(version)
    }
    return [
        _("no approved local review in %(market)s") % {"market": code}
        for code in applicable_codes
        if code not in approved
    ]


def task_promotion_gaps(definition):
    """Every reason the task cannot move from candidate to validated; empty when it can."""
    version = definition.current_version
    if version is None:
        return [_("the task has no version")]
    applicability = list(version.applicability.select_related("market"))
    applicable = [a.market.code for a in applicability if a.applies]
    return (
        _design_gaps(version)
        + _applicability_gaps(version, applicability)
        + _reference_gaps(version)
        + _review_gaps(version, [c for c in MARKET_ORDER if c in applicable])
        + _contract_gaps(version)
    )


def task_promote(*, definition_id, actor):
    with transaction.atomic():
        definition = TaskDefinition.objects.select_for_update().get(pk=definition_id)
        if definition.lifecycle != Lifecycle.CANDIDATE:
            raise InvalidTransition(_("Only a candidate task can be promoted."))
        if not (actor and actor.is_superuser):
            raise PermissionRefused(_("Only the method lead promotes tasks."))
        gaps = task_promotion_gaps(definition)
        if gaps:
            raise ValidationFailed(
                _("The task cannot be validated yet: %(gaps)s.") % {"gaps": "; ".join(gaps)},
                field_errors={"lifecycle": gaps},
            )
        definition.lifecycle = Lifecycle.VALIDATED
        definition.save(update_fields=["lifecycle"])
    return definition
