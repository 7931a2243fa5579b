"""Local review and a task's life: each a table of (state, action) -> Move and one function
that applies it."""

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from catalogue.models import (
    VALIDATING_ACTIONS,
    Lifecycle,
    LocalReview,
    ReviewEvent,
    ReviewState,
    TaskDefinition,
    TaskEvent,
    TaskVersion,
)
from catalogue.rules import (
    require_author_for,
    require_reviewer_for,
    task_promotion_gaps,
    task_review_submission_gaps,
    task_version_hash,
)
from catalogue.signals import review_moved
from mica.content.rows import rows_named
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.workflows import Move, workflow_move

S = ReviewState

# Who may take each action: authors submit, independent reviewers decide.
REVIEW_TRANSITIONS = {
    (S.DRAFT, "submit"): Move(S.IN_REVIEW, "author"),
    (S.CHANGES_REQUESTED, "submit"): Move(S.IN_REVIEW, "author"),
    (S.IN_REVIEW, "request_changes"): Move(S.CHANGES_REQUESTED, "reviewer"),
    (S.IN_REVIEW, "approve"): Move(S.APPROVED, "reviewer"),
    # Any edit of the version after approval voids the approval.
    (S.APPROVED, "void"): Move(S.VOIDED, "system"),
    # The edited content goes back to a reviewer with the review's comments and history:
    # a voided approval is never a dead end.
    (S.VOIDED, "resubmit"): Move(S.IN_REVIEW, "author"),
}

ACTION_LABELS = {
    "submit": _lazy("submit for review"),
    "request_changes": _lazy("request changes"),
    "approve": _lazy("approve"),
    "void": _lazy("void"),
    "resubmit": _lazy("resubmit for review"),
}

# Actions whose reason is the point of the move: "needs changes" says which changes.
REASON_REQUIRED = {"request_changes"}
# Actions that put content before a reviewer: only content a review can make valid.
SUBMITTING = {"submit", "resubmit"}


def _check_actor(review, role, actor):
    if role == "author":
        require_author_for(review, actor)
    elif role == "reviewer":
        require_reviewer_for(review, actor)
    return role


def _check_submittable(version):
    """Refuse a review of content that no approval could make valid: the rules a local
    review does not meet, in the sentences the version's page and promotion use."""
    gaps = task_review_submission_gaps(version)
    if gaps:
        raise ValidationFailed(
            _("This version cannot go to a reviewer yet: %(gaps)s.") % {"gaps": "; ".join(gaps)},
            field_errors={"version": gaps},
        )


def _save_open(review):
    """Save a review; reopening one beside another open review of the same version and
    market is refused, as opening a second is."""
    try:
        with transaction.atomic():
            review.save()
    except IntegrityError as clash:
        raise InvalidTransition(
            _("This version already has an open review in %(market)s.")
            % {"market": review.market.code}
        ) from clash


def review_transition(*, review_id, action, actor=None, reason=""):
    """Lock the review, check the move and the actor, apply it and log it, atomically."""
    with transaction.atomic():
        review = (
            LocalReview.objects.select_for_update()
            .select_related("version", "market")
            .get(pk=review_id)
        )
        move = workflow_move(
            REVIEW_TRANSITIONS,
            review.state,
            action,
            _("A review that is %(state)s cannot be moved by “%(action)s”.")
            % {"state": review.get_state_display(), "action": ACTION_LABELS[action]},
        )
        target = move.target
        role = _check_actor(review, move.role, actor)
        if action in REASON_REQUIRED and not reason.strip():
            missing = _("Say which changes are needed: the author reads your request.")
            raise ValidationFailed(missing, field_errors={"reason": [missing]})
        if action in SUBMITTING:
            _check_submittable(review.version)
        content_hash = task_version_hash(review.version)
        source = review.state
        review.state = target
        if action == "approve":
            review.reviewer = actor
            review.approved_hash = content_hash
        if action == "resubmit":
            # The old approval is in the review's events; this round has neither yet.
            review.reviewer, review.approved_hash = None, ""
        _save_open(review)
        event = ReviewEvent.objects.create(
            review=review,
            action=action,
            from_state=source,
            to_state=target,
            actor=actor if getattr(actor, "pk", None) else None,
            role=role,
            content_hash=content_hash,
            reason=reason.strip(),
        )
        review_moved.send(sender=LocalReview, review=review, event=event)
    return review


# --- A task's life ------------------------------------------------------------------

L = Lifecycle

# Draft and local review happen on versions (above); the task itself is validated, has a
# version made current (only once validated: that is what the public page shows) and is
# retired with a reason. The method lead decides each.
TASK_TRANSITIONS = {
    (L.CANDIDATE, "promote"): Move(L.VALIDATED, "method-lead"),
    (L.VALIDATED, "make_current"): Move(L.VALIDATED, "method-lead"),
    (L.CANDIDATE, "retire"): Move(L.RETIRED, "method-lead"),
    (L.VALIDATED, "retire"): Move(L.RETIRED, "method-lead"),
}

TASK_ACTION_LABELS = {
    "promote": _lazy("promote to validated"),
    "make_current": _lazy("make current"),
    "retire": _lazy("retire"),
}


def _task_move_refusal(definition, action):
    if action == "promote":
        return _("Only a candidate task can be promoted.")
    if action == "make_current" and definition.lifecycle == L.CANDIDATE:
        return _("Only a validated task has its version made current: promote the task first.")
    return _("A task that is %(state)s cannot be moved by “%(action)s”.") % {
        "state": definition.get_lifecycle_display(),
        "action": TASK_ACTION_LABELS[action],
    }


def _require_method_lead(action, actor):
    if not (actor and actor.is_superuser):
        refusals = {
            "promote": _("Only the method lead promotes tasks."),
            "make_current": _("Only the method lead makes a version current."),
            "retire": _("Only the method lead retires tasks."),
        }
        raise PermissionRefused(refusals[action])


def _judged_version(definition, version_id):
    """The version a decision is about: the named one, which must be the task's own."""
    if version_id is None:
        return definition.current_version
    version = TaskVersion.objects.filter(pk=version_id, definition=definition).first()
    if version is None:
        raise ValidationFailed(_("This version belongs to another task."))
    return version


def _check_rules(definition, action, version, reason):
    """The method's rules for the action, judged under the lock; refusals name every gap."""
    if action == "retire":
        if not reason.strip():
            refusal = _("Say why the task is retired: the reason stays in its history.")
            raise ValidationFailed(refusal, field_errors={"reason": [refusal]})
        return
    if action == "make_current" and version is not None:
        if version.pk == definition.current_version_id:
            raise InvalidTransition(
                _("%(version)s is already the current version.") % {"version": version}
            )
    gaps = task_promotion_gaps(definition, version)
    if gaps:
        message = {
            "promote": _("The task cannot be validated yet: %(gaps)s."),
            "make_current": _("%(version)s cannot be made current yet: %(gaps)s."),
        }[action]
        raise ValidationFailed(
            message % {"gaps": "; ".join(gaps), "version": version},
            field_errors={"lifecycle": gaps},
        )


def task_transition(*, definition_id, action, actor, version_id=None, reason=""):
    """Lock the task, check the move, the actor and the method's rules, apply the move and
    log it, atomically. `version_id` names the version promoted or made current."""
    with transaction.atomic():
        # No join: PostgreSQL locks no row on the nullable side of an outer join.
        definition = TaskDefinition.objects.select_for_update().get(pk=definition_id)
        move = workflow_move(
            TASK_TRANSITIONS,
            definition.lifecycle,
            action,
            _task_move_refusal(definition, action),
        )
        _require_method_lead(action, actor)
        version = _judged_version(definition, version_id)
        _check_rules(definition, action, version, reason)
        source = definition.lifecycle
        definition.lifecycle = move.target
        if action == "make_current":
            definition.current_version = version
        # save(), not update(): the task's history keeps a revision of each decision.
        if reason:
            definition._change_reason = reason
        definition.save()
        if action in VALIDATING_ACTIONS and version is not None:
            # Validated: its text is this version number's for good (mica.frozen_rows).
            TaskVersion.objects.filter(pk=version.pk, frozen_at=None).update(
                frozen_at=timezone.now()
            )
            rows_named(TaskVersion, [version])
        TaskEvent.objects.create(
            definition=definition,
            version=version,
            action=action,
            from_state=source,
            to_state=move.target,
            actor=actor,
            role=move.role,
            reason=reason,
        )
    return definition
