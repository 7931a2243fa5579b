"""The outage record's life: reported, then accepted or rejected by someone else.

Seed: "A fallback is used only for a documented platform outage, never because it is
easier for one system." An attempt that ran on a pre-registered fallback counts only
while every platform ranked above it has an accepted outage covering the run's
snapshot date (submissions.models.FALLBACK_JUSTIFIED). Accepting or rejecting is a
decision with its reason, taken by staff competent for the market who did not report
the outage (four eyes), and the cells it touches are recomputed in the same
transaction (`outage_decided`, heard by the gate).
"""

from django.db import transaction
from django.dispatch import Signal
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from markets.models import OutageEvent, OutageState, PlatformOutage, RegistrationStatus
from markets.services import require_market_competence, require_market_reviewer
from mica.errors import PermissionRefused, ValidationFailed
from mica.text import plain
from mica.workflows import Move, workflow_move

# `outage=…`: an outage record was accepted or rejected; the results floor recomputes
# the cells of the attempts that ran on a fallback below it.
outage_decided = Signal()

OUTAGE_TRANSITIONS = {
    (OutageState.REPORTED, "accept"): Move(OutageState.ACCEPTED, "staff"),
    (OutageState.REPORTED, "reject"): Move(OutageState.REJECTED, "staff"),
}
OUTAGE_ACTION_LABELS = {
    "accept": gettext_lazy("accept"),
    "reject": gettext_lazy("reject"),
}


def outage_errors(platform, first_day, last_day, evidence):
    """{field: [message]} of an outage record that cannot be recorded; empty when it can."""
    errors = {}
    if platform is not None and platform.registration.status == RegistrationStatus.DRAFT:
        errors["platform"] = [_("Only a platform of a pre-registered set can have an outage.")]
    if first_day and last_day and last_day < first_day:
        errors["last_day"] = [_("The last day of an outage cannot be before its first day.")]
    if not plain(evidence):
        errors["evidence"] = [_("Say what shows the platform was down.")]
    return errors


def outage_report(*, platform, first_day, last_day, evidence, actor):
    """Record that a registered platform was down from `first_day` to `last_day`, with the
    evidence; it counts once someone else accepts it."""
    require_market_competence(actor, platform.registration.market_edition.market.code)
    errors = outage_errors(platform, first_day, last_day, evidence)
    if errors:
        raise ValidationFailed(_("The outage was not recorded."), field_errors=errors)
    return PlatformOutage.objects.create(
        platform=platform,
        first_day=first_day,
        last_day=last_day,
        evidence=plain(evidence),
        reported_by=actor,
    )


def outage_decide(*, outage_id, action, reason, actor):
    """Accept or reject a reported outage, with the reason; never the reporter's call."""
    reason = plain(reason)
    with transaction.atomic():
        outage = (
            PlatformOutage.objects.select_for_update()
            .select_related("platform__registration__market_edition__market")
            .get(pk=outage_id)
        )
        move = workflow_move(
            OUTAGE_TRANSITIONS,
            outage.state,
            action,
            _("An outage that is %(state)s cannot be moved by “%(action)s”.")
            % {
                "state": outage.get_state_display(),
                "action": OUTAGE_ACTION_LABELS.get(action, action),
            },
        )
        require_market_reviewer(actor, outage.platform.registration.market_edition.market.code)
        if outage.reported_by_id == getattr(actor, "pk", None):
            raise PermissionRefused(
                _("Nobody decides on an outage they reported: someone else accepts or rejects it.")
            )
        if not reason:
            missing = _("Say why the outage is accepted or rejected.")
            raise ValidationFailed(missing, field_errors={"reason": [missing]})
        source = outage.state
        outage.state = move.target
        outage.save(update_fields=["state"])
        OutageEvent.objects.create(
            outage=outage,
            action=action,
            from_state=source,
            to_state=move.target,
            role=move.role,
            actor=actor,
            reason=reason,
        )
        outage_decided.send(sender=PlatformOutage, outage=outage)
    return outage
