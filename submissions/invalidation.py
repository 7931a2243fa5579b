"""Invalidating an attempt: a recorded decision, never an edit or a deletion.

The attempt stays in the record with its evidence; it stops counting towards its
cell's figures, and its cell is recomputed in the same transaction. A critical
safety event it carries keeps blocking the cell (seed: "There is no re-run that
erases it and no appeal that removes it from the record").

An invalidation is reversed only by a later decision with its reason
(InvalidationReversal), never by deleting it: the figures read the latest decision
(submissions.models.COUNTED) and the record keeps both. Decisions are a history:
invalidation and reversal follow each other any number of times, each a new row naming
what it reverses, the latest in force, each recomputing the cell.
"""

from django.db import transaction
from django.utils.translation import gettext as _

from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.text import plain
from submissions.models import Attempt, AttemptInvalidation, InvalidationReversal
from submissions.signals import attempts_recorded


def attempt_invalidate(*, attempt_id, reason, actor):
    """Record that MICA staff invalidated the attempt, with why; recompute its cell."""
    reason = plain(reason)
    if not getattr(actor, "is_staff", False):
        raise PermissionRefused(_("Only MICA staff invalidate attempts."))
    if not reason:
        raise ValidationFailed(_("Say why the attempt no longer counts."))
    with transaction.atomic():
        # The attempt's row is locked: two decisions on it are taken one after the other,
        # each reading the one before.
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        if _in_force(attempt) is not None:
            raise InvalidTransition(
                _("Attempt %(id)s is already invalidated.") % {"id": attempt.attempt_id}
            )
        AttemptInvalidation.objects.create(
            attempt=attempt,
            action="invalidate",
            from_state="counted",
            to_state="invalidated",
            role="staff",
            actor=actor,
            reason=reason,
        )
        _cell_recomputed(attempt)
    return attempt


def invalidation_reverse(*, attempt_id, reason, actor):
    """Record that MICA staff reversed the attempt's invalidation, with why: it counts
    again; its cell is recomputed."""
    reason = plain(reason)
    if not getattr(actor, "is_staff", False):
        raise PermissionRefused(_("Only MICA staff reverse an invalidation."))
    if not reason:
        raise ValidationFailed(_("Say why the invalidation no longer holds."))
    with transaction.atomic():
        attempt = Attempt.objects.select_for_update().get(pk=attempt_id)
        invalidation = _in_force(attempt)
        if invalidation is None:
            raise InvalidTransition(
                _("Attempt %(id)s is not invalidated: there is nothing to reverse.")
                % {"id": attempt.attempt_id}
            )
        InvalidationReversal.objects.create(
            invalidation=invalidation,
            action="reverse",
            from_state="invalidated",
            to_state="counted",
            role="staff",
            actor=actor,
            reason=reason,
        )
        _cell_recomputed(attempt)
    return attempt


def _in_force(attempt):
    """The attempt's invalidation that no reversal answers, or None: the latest decision
    when it is an invalidation (every earlier one was reversed before the next was made)."""
    return (
        AttemptInvalidation.objects.filter(attempt=attempt, reversal__isnull=True)
        .order_by("-at", "-pk")
        .first()
    )


def _cell_recomputed(attempt):
    """The attempt's cell is computed again in the transaction that decided on it."""
    attempts_recorded.send(
        sender=Attempt, cells=[(attempt.snapshot_id, attempt.market_id, attempt.family_id)]
    )
