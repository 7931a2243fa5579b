"""Local review: a table of (state, action) -> state and one function that applies it."""

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from catalogue.models import LocalReview, ReviewEvent, ReviewState
from catalogue.rules import require_author_for, require_reviewer_for, task_version_hash
from mica.errors import InvalidTransition

S = ReviewState

TRANSITIONS = {
    (S.DRAFT, "submit"): S.IN_REVIEW,
    (S.CHANGES_REQUESTED, "submit"): S.IN_REVIEW,
    (S.IN_REVIEW, "request_changes"): S.CHANGES_REQUESTED,
    (S.IN_REVIEW, "approve"): S.APPROVED,
    # Any edit of the version after approval voids the approval.
    (S.APPROVED, "void"): S.VOIDED,
}

ACTION_LABELS = {
    "submit": _lazy("submit for review"),
    "request_changes": _lazy("request changes"),
    "approve": _lazy("approve"),
    "void": _lazy("void"),
}

# Who may take each action: authors submit, independent reviewers decide.
ROLE_FOR_ACTION = {
    "submit": "author",
    "request_changes": "reviewer",
    "approve": "reviewer",
    "void": "system",
}


def _check_actor(review, action, actor):
    role = ROLE_FOR_ACTION[action]
    if role == "author":
        require_author_for(review, actor)
    elif role == "reviewer":
        require_reviewer_for(review, actor)
    return role


def review_transition(*, review_id, action, actor=None, comment=""):
    """Lock the review, check the move and the actor, apply it and log it, atomically."""
    with transaction.atomic():
        review = (
            LocalReview.objects.select_for_update()
            .select_related("version", "market")
            .get(pk=review_id)
        )
        target = TRANSITIONS.get((review.state, action))
        if target is None:
            raise InvalidTransition(
                _("A review that is %(state)s cannot be moved by “%(action)s”.")
                % {"state": review.get_state_display(), "action": ACTION_LABELS[action]}
            )
        role = _check_actor(review, action, actor)
        content_hash = task_version_hash(review.version)
        source = review.state
        review.state = target
        if action == "approve":
            review.reviewer = actor
            review.approved_hash = content_hash
        review.save()
        ReviewEvent.objects.create(
            review=review,
            action=action,
            from_state=source,
            to_state=target,
            actor=actor if getattr(actor, "pk", None) else None,
            actor_role=role,
            content_hash=content_hash,
            comment=comment,
        )
    return review
