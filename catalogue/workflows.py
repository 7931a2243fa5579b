"""Local review: a table of (state, action) -> Move and one function that applies it."""

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from catalogue.models import LocalReview, ReviewEvent, ReviewState
from catalogue.rules import require_author_for, require_reviewer_for, task_version_hash
from catalogue.signals import review_moved
from mica.errors import ValidationFailed
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
}

ACTION_LABELS = {
    "submit": _lazy("submit for review"),
    "request_changes": _lazy("request changes"),
    "approve": _lazy("approve"),
    "void": _lazy("void"),
}

# Actions whose reason is the point of the move: "needs changes" says which changes.
REASON_REQUIRED = {"request_changes"}


def _check_actor(review, role, actor):
    if role == "author":
        require_author_for(review, actor)
    elif role == "reviewer":
        require_reviewer_for(review, actor)
    return role


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
        content_hash = task_version_hash(review.version)
        source = review.state
        review.state = target
        if action == "approve":
            review.reviewer = actor
            review.approved_hash = content_hash
        review.save()
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
