from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from governance.models import Appeal, AppealEvent, AppealState, Correction, DisclosureStatement
from governance.selectors import disclosure_key_taken
from mica.errors import Conflict, PermissionRefused, ValidationFailed
from mica.text import plain
from mica.workflows import Move, workflow_move
from submissions.models import FINAL_CHALLENGE_STATES, Challenge
from submissions.outbox import notify_appeal_decided, notify_appeal_filed


def correction_record(*, challenge, text_en, text_ko):
    """Record the correction an accepted challenge makes, in both languages."""
    if not (text_en or "").strip() or not (text_ko or "").strip():
        raise ValidationFailed(
            _("Accepting a challenge needs the correction in English and Korean."),
            field_errors={"correction": [_("Write the correction in both languages.")]},
        )
    return Correction.objects.create(
        edition=challenge.edition,
        section_id=challenge.section_id,
        challenge=challenge,
        text_en=text_en.strip(),
        text_ko=text_ko.strip(),
        decided_on=timezone.localdate(),
    )


# What a new statement never copies from the one it supersedes: its identity and dates, and
# the base columns of the translated texts (modeltranslation's copy of one language, which
# would overwrite the changed English or Korean column it mirrors).
_NOT_CARRIED = {"id", "supersedes", "superseded_at", "created_at", "title", "statement"}


def disclosure_amount_band_errors(values):
    """{field: [message]} for an amount band given by half, or running backwards."""
    low, high = values.get("amount_min"), values.get("amount_max")
    if (low is None) != (high is None):
        missing = "amount_max" if high is None else "amount_min"
        return {missing: [_("An amount band needs both its lower and its upper bound.")]}
    if low is not None and low > high:
        return {"amount_max": [_("The upper bound of the band is below its lower bound.")]}
    return {}


def _statement_save(statement, actor):
    errors = disclosure_amount_band_errors(
        {"amount_min": statement.amount_min, "amount_max": statement.amount_max}
    )
    if errors:
        raise ValidationFailed(_("The amount band is not valid."), field_errors=errors)
    if actor is not None:
        statement._history_user = actor  # simple-history: who made this revision
    statement.save()
    return statement


def disclosure_add(*, values, actor=None):
    """The first statement of a new key in the register."""
    with transaction.atomic():
        if disclosure_key_taken(values.get("key")):
            raise ValidationFailed(
                _("The register already has a current statement under this key: change it."),
                field_errors={"key": [_("This key is taken.")]},
            )
        return _statement_save(DisclosureStatement(**values), actor)


STATEMENT_CHANGED_MEANWHILE = gettext_lazy(
    "This statement was changed by someone else meanwhile; "
    "here is the current one: make your change to it."
)


def disclosure_supersede(*, key, changes, actor=None, superseding=None):
    """A changed statement is a new one superseding the current; the old stays as history.

    `superseding`, the id of the statement the change was made to, refuses a change made
    to a statement someone else superseded meanwhile (theirs would be lost silently)."""
    with transaction.atomic():
        current = DisclosureStatement.objects.select_for_update().get(
            key=key, superseded_at__isnull=True
        )
        if superseding is not None and current.pk != superseding:
            raise Conflict(STATEMENT_CHANGED_MEANWHILE)
        fields = {
            f.attname: getattr(current, f.attname)
            for f in current._meta.concrete_fields
            if f.name not in _NOT_CARRIED
        }
        fields.update(changes)
        current.superseded_at = timezone.now()
        current.save(update_fields=["superseded_at"])
        return _statement_save(DisclosureStatement(**fields, supersedes=current), actor)


def appeal_file(*, challenge, grounds):
    challenge.refresh_from_db(fields=["state"])
    if challenge.state not in FINAL_CHALLENGE_STATES:
        raise ValidationFailed(_("Only a decided challenge can be appealed."))
    if not plain(grounds):
        raise ValidationFailed(
            _("An appeal must give its grounds."),
            field_errors={"grounds": [_("Give the grounds.")]},
        )
    with transaction.atomic():
        # One appeal a decision: the lock makes two appeals sent at once file one.
        Challenge.objects.select_for_update().filter(pk=challenge.pk).first()
        if challenge.appeals.exists():
            raise ValidationFailed(
                _("This decision has already been appealed; the appeal is shown on its page.")
            )
        appeal = Appeal.objects.create(challenge=challenge, grounds=plain(grounds))
        AppealEvent.objects.create(
            appeal=appeal,
            action="file",
            from_state="",
            to_state=appeal.state,
            role="challenger",
            reason=appeal.grounds,
        )
        notify_appeal_filed(appeal, appeal_deciders(appeal))
    return appeal


def appeal_deciders(appeal):
    """Who is told an appeal waits: active staff who may decide appeals, with an address,
    but not the person who made the decision under appeal (they may not decide it)."""
    decision = appeal.challenge.events.exclude(action="file").order_by("-at", "-pk").first()
    people = (
        get_user_model()
        .objects.with_perm(
            "governance.change_appeal", backend="django.contrib.auth.backends.ModelBackend"
        )
        .filter(is_staff=True)
        .exclude(email="")
    )
    if decision is not None and decision.actor_id is not None:
        people = people.exclude(pk=decision.actor_id)
    return people


APPEAL_TRANSITIONS = {
    (AppealState.RECEIVED, "uphold"): Move(AppealState.UPHELD, "staff"),
    (AppealState.RECEIVED, "dismiss"): Move(AppealState.DISMISSED, "staff"),
}


def appeal_decide(*, appeal_id, uphold, reason, actor):
    """Decide an appeal; the person who made the appealed decision may not decide it."""
    if not (actor and actor.is_staff):
        raise PermissionRefused(_("Only MICA staff decide appeals."))
    if not plain(reason):
        raise ValidationFailed(_("Every decision needs a reason."))
    with transaction.atomic():
        appeal = Appeal.objects.select_for_update().select_related("challenge").get(pk=appeal_id)
        move = workflow_move(
            APPEAL_TRANSITIONS,
            appeal.state,
            "uphold" if uphold else "dismiss",
            _("This appeal has already been decided."),
        )
        decision = appeal.challenge.events.exclude(action="file").order_by("-at", "-pk").first()
        if decision is not None and decision.actor_id == actor.pk:
            raise PermissionRefused(
                _(
                    "The appeal goes to someone other than the person who "
                    "made the decision under appeal."
                )
            )
        source = appeal.state
        appeal.state = move.target
        appeal.decided_by = actor
        appeal.decided_role = "method-lead" if actor.is_superuser else "editor"
        appeal.reason = plain(reason)
        appeal.decided_at = timezone.now()
        appeal.save()
        AppealEvent.objects.create(
            appeal=appeal,
            action="uphold" if uphold else "dismiss",
            from_state=source,
            to_state=move.target,
            role=appeal.decided_role,
            actor=actor,
            reason=appeal.reason,
        )
        notify_appeal_decided(appeal, "uphold" if uphold else "dismiss")
    return appeal


def correction_follow_acceptance(sender, *, challenge, text_en, text_ko, **kwargs):
    """An accepted challenge's correction, recorded in the transaction that accepts it."""
    correction_record(challenge=challenge, text_en=text_en, text_ko=text_ko)
