"""The persistent outbox: a message is a row first, then a job mails it with retries."""

import datetime
import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from catalogue.access import holdout_access
from catalogue.models import TaskSet
from catalogue.selectors import review_deciders
from mica.bilingual import LANGUAGES
from mica.jobs.services import task_send
from mica.methodology.models import ChapterItem
from mica.methodology.section_titles import section_name, section_record
from submissions.models import OutboxMessage, OutboxState

logger = logging.getLogger(__name__)


# How many times a message is tried: the first send and outbox_send's retries.
OUTBOX_MAX_ATTEMPTS = 9
# A failed message whose retries should long be over (they back off for minutes at most)
# lost its retry: the sweep sends it again.
RETRIES_LOST_AFTER = datetime.timedelta(hours=1)
SWEEP_BATCH = 500


def outbox_queue(*, to, subject, body):
    message = OutboxMessage.objects.create(to=to, subject=subject[:200], body=body)
    # Within the app: the task module imports this one as it loads.
    from submissions.tasks import outbox_send

    # A broker that cannot take it leaves the message pending, for the sweep.
    transaction.on_commit(lambda: task_send(outbox_send, message.pk))
    return message


def outbox_sweep(*, now=None):
    """What beat runs every OUTBOX_SWEEP_INTERVAL seconds: send again what is still
    waiting. A message pending OUTBOX_SWEEP_AFTER_SECONDS after it was written (its send
    was refused by a broker that was down, or lost) and a failed one whose retries were
    lost, each with tries left, go to the mail queue again. Stops at the first refusal:
    the broker is still down. Returns the ids sent."""
    # Within the app: the task module imports this one as it loads.
    from submissions.tasks import outbox_send

    now = now or timezone.now()
    waiting = OutboxMessage.objects.filter(attempts__lt=OUTBOX_MAX_ATTEMPTS).filter(
        Q(
            state=OutboxState.PENDING,
            created_at__lt=now - datetime.timedelta(seconds=settings.OUTBOX_SWEEP_AFTER_SECONDS),
        )
        | Q(state=OutboxState.FAILED, created_at__lt=now - RETRIES_LOST_AFTER)
    )
    sent = []
    for message_id in waiting.order_by("created_at", "pk").values_list("pk", flat=True)[
        :SWEEP_BATCH
    ]:
        if not task_send(outbox_send, message_id):
            break
        sent.append(message_id)
    if sent:
        logger.warning("Outbox messages sent again: %s", sent)
    return sent


def outbox_deliver(message_id):
    """Mail one message; a failure is recorded and raised so the job retries it.

    The try is claimed first (its count moved only if no other delivery moved it since
    it was read), so two deliveries of one message (the sweep's and a late original)
    do not both mail it at once."""
    message = OutboxMessage.objects.get(pk=message_id)
    if message.state == OutboxState.SENT:
        return message
    claimed = (
        OutboxMessage.objects.filter(pk=message_id, attempts=message.attempts)
        .exclude(state=OutboxState.SENT)
        .update(attempts=F("attempts") + 1)
    )
    if not claimed:
        return message
    try:
        send_mail(message.subject, message.body, settings.DEFAULT_FROM_EMAIL, [message.to])
    except OSError as error:
        OutboxMessage.objects.filter(pk=message_id).update(
            last_error=str(error)[:1000], state=OutboxState.FAILED
        )
        raise
    OutboxMessage.objects.filter(pk=message_id).update(
        state=OutboxState.SENT, sent_at=timezone.now(), last_error=""
    )
    return message


def _challenge_link(challenge):
    return settings.SITE_URL + reverse("submissions:challenge", args=[challenge.pk])


# What happened, as the subject of each e-mail to a challenger says it (translated when
# sent, in the filing's language): the subject alone tells the news.
CHALLENGER_SUBJECTS = {
    "file": gettext_noop("MICA challenge #%(id)s filed: please confirm your address"),
    "confirm": gettext_noop("MICA challenge #%(id)s: address confirmed"),
    "screen": gettext_noop("MICA challenge #%(id)s screened: now in the public register"),
    "triage": gettext_noop("MICA challenge #%(id)s triaged: awaiting the method lead's decision"),
    "accept": gettext_noop("MICA challenge #%(id)s decided: accepted and corrected"),
    "hold": gettext_noop("MICA challenge #%(id)s decided: held for the next edition"),
    "reject": gettext_noop("MICA challenge #%(id)s decided: rejected"),
    "withdraw": gettext_noop("MICA challenge #%(id)s withdrawn"),
    "appeal-file": gettext_noop("Appeal on MICA challenge #%(id)s received"),
    "appeal-uphold": gettext_noop("Appeal on MICA challenge #%(id)s decided: upheld"),
    "appeal-dismiss": gettext_noop("Appeal on MICA challenge #%(id)s decided: dismissed"),
}


def notify_challenger(challenge, body, *, happened):
    """Mail the challenger; `happened` names the step, which the subject says."""
    with translation.override(challenge.language):
        subject = _(CHALLENGER_SUBJECTS[happened]) % {"id": challenge.pk}
        outbox_queue(to=challenge.contact_email, subject=subject, body=str(body))


def challenge_screeners():
    """Who can act on a new challenge: active staff allowed to screen it (the permission
    to change challenges, the method lead's included), with an address."""
    return (
        get_user_model()
        .objects.with_perm(
            "submissions.change_challenge", backend="django.contrib.auth.backends.ModelBackend"
        )
        .filter(is_staff=True)
        .exclude(email="")
    )


def notify_editors_of_arrival(challenge):
    """Tell the people who can screen a new challenge that it waits for them."""
    link = settings.SITE_URL + reverse("admin:submissions_challenge_change", args=[challenge.pk])
    record = section_record(challenge.edition, challenge.section_id)

    def titled():
        return section_name(record, challenge.section_id)

    def write():
        names = {
            "id": challenge.pk,
            "section": challenge.section_id,
            "type": challenge.get_challenge_type_display(),
            "link": link,
        }
        # The subject names the section by its title, in the language being written.
        subject = _("New MICA challenge #%(id)s on %(section)s") % {**names, "section": titled()}
        body = (
            _(
                "A challenge (%(type)s) to %(section)s arrived. It waits for the "
                "challenger to confirm their address, then for you to screen it.\n%(link)s"
            )
            % names
        )
        return subject, body

    subject, body = _bilingual(write)
    for person in challenge_screeners():
        outbox_queue(to=person.email, subject=subject, body=body)


# The steps that decide a challenge: their e-mail carries the challenger's appeal link.
DECISIONS = ("accept", "hold", "reject")


def notify_state_change(challenge, reason, action):
    with translation.override(challenge.language):
        body = _("Your challenge is now: %(state)s.\nReason: %(reason)s\n%(link)s") % {
            "state": challenge.get_state_display(),
            "reason": reason,
            "link": _challenge_link(challenge),
        }
        if action in DECISIONS:
            body += "\n\n" + _(
                "You may appeal this decision once; someone other than the person who made "
                "it decides the appeal, in public. Only you can file it, through this link "
                "(keep it to yourself):\n%(link)s"
            ) % {"link": settings.SITE_URL + _appeal_path(challenge)}
    notify_challenger(challenge, body, happened=action)


def notify_confirmed(challenge):
    with translation.override(challenge.language):
        body = _(
            "Your address is confirmed. An editor screens the challenge next; until then "
            "it stays private, and the link you opened shows its state:\n%(link)s"
        ) % {"link": settings.SITE_URL + _confirmation_path(challenge)}
    notify_challenger(challenge, body, happened="confirm")


def _confirmation_path(challenge):
    # Within the app: the challenges module imports this one as it loads.
    from submissions.challenges import confirmation_token

    return reverse("submissions:challenge-confirm", args=[confirmation_token(challenge)])


def _appeal_path(challenge):
    """The appeal form's address with the challenger's key, in the current language."""
    # Within the app: the challenges module imports this one as it loads.
    from submissions.challenges import appeal_token

    path = reverse("governance:challenge-appeal", args=[challenge.pk])
    return f"{path}?{urlencode({'token': appeal_token(challenge)})}"


def notify_appeal_filed(appeal, deciders):
    """Tell the challenger the appeal is received, and the people who may decide it that
    it waits for them, with the link to decide it."""
    challenge = appeal.challenge
    with translation.override(challenge.language):
        body = _(
            "Your appeal is received. Someone other than the person who made the decision "
            "decides it; the decision and its reason are public:\n%(link)s"
        ) % {"link": _challenge_link(challenge)}
    notify_challenger(challenge, body, happened="appeal-file")
    link = settings.SITE_URL + reverse("admin:governance_appeal_change", args=[appeal.pk])

    def write():
        subject = _("MICA appeal #%(appeal)s on challenge #%(id)s awaits a decision") % {
            "appeal": appeal.pk,
            "id": challenge.pk,
        }
        body = _(
            "An appeal against the decision on challenge #%(id)s was filed. You may "
            "decide it; the person who made the decision may not.\n%(link)s"
        ) % {"id": challenge.pk, "link": link}
        return subject, body

    subject, body = _bilingual(write)
    for person in deciders:
        outbox_queue(to=person.email, subject=subject, body=body)


def notify_appeal_decided(appeal, action):
    challenge = appeal.challenge
    with translation.override(challenge.language):
        body = _("The decision on your appeal: %(state)s.\nReason: %(reason)s\n%(link)s") % {
            "state": appeal.get_state_display(),
            "reason": appeal.reason,
            "link": _challenge_link(challenge),
        }
    notify_challenger(challenge, body, happened=f"appeal-{action}")


def _bilingual(write):
    """`write()` -> (subject, body) in English and in Korean, joined: the portal does not
    know a staff member's language."""
    parts = []
    for language in LANGUAGES:
        with translation.override(language):
            parts.append(write())
    subject = " / ".join(subject for subject, _body in parts)
    return subject, "\n\n----\n\n".join(text for _subject, text in parts)


def notify_claim_owners(challenge):
    """A screened challenge is public and waits for an answer from whoever owns its claim;
    a claim nobody owns is the method lead's to answer."""
    owned = ChapterItem.objects.filter(edition=challenge.edition, section_id=challenge.section_id)
    people = get_user_model().objects.filter(is_active=True, is_staff=True).exclude(email="")
    owners = people.filter(pk__in=owned.values("owner"))
    link = settings.SITE_URL + reverse("admin:submissions_challenge_change", args=[challenge.pk])
    names = {"id": challenge.pk, "section": challenge.section_id, "link": link}
    record = section_record(challenge.edition, challenge.section_id)

    def titled():
        # The subject names the section by its title, in the language being written.
        return {**names, "section": section_name(record, challenge.section_id)}

    def to_owner():
        subject = _("MICA challenge #%(id)s on %(section)s, a claim you own") % titled()
        body = (
            _(
                "A challenge to %(section)s, a claim you own, is now public and waits for "
                "an answer.\n%(link)s"
            )
            % names
        )
        return subject, body

    def to_method_lead():
        subject = _("MICA challenge #%(id)s on %(section)s, a claim without an owner") % titled()
        body = (
            _(
                "A challenge to %(section)s is now public and waits for an answer. Nobody "
                "owns that claim, so it is in the method lead's queue.\n%(link)s"
            )
            % names
        )
        return subject, body

    if not owners.exists():
        owners, write = people.filter(is_superuser=True), to_method_lead
    else:
        write = to_owner
    subject, body = _bilingual(write)
    for person in owners:
        outbox_queue(to=person.email, subject=subject, body=body)


# --- Local review ---------------------------------------------------------------------

# Whom each move of a local review calls on: the people who can take the next step.
REVIEW_NEXT_STEP = {
    "submit": "deciders",
    "resubmit": "deciders",
    "request_changes": "author",
    "approve": "author",
    "void": "author",
}


def _review_link(review):
    return settings.SITE_URL + reverse("admin:catalogue_localreview_change", args=[review.pk])


def _review_mail(review, event, holdout):
    """Subject and body in one language. A holdout task is named by nothing of its own
    (no id, no title, no reviewer's words, which may quote it): its review's number, its
    market and the link are all a message carries."""
    names = {
        "review": review.pk,
        "market": review.market.code,
        "task": review.version if not holdout else _("a task of the private holdout"),
        "state": review.get_state_display(),
    }
    subject = _("MICA local review #%(review)s (%(market)s): %(state)s") % names
    lines = {
        "submit": _("%(task)s waits for a local review in %(market)s; you can decide it."),
        "resubmit": _(
            "%(task)s was edited after its approval in %(market)s and waits for a local "
            "review again; you can decide it."
        ),
        "request_changes": _("A reviewer asks for changes to %(task)s in %(market)s."),
        "approve": _("%(task)s is approved for %(market)s."),
        "void": _(
            "The approval of %(task)s in %(market)s was voided by a later edit; "
            "resubmit the review when the version is ready."
        ),
    }
    body = [lines[event.action] % names]
    if event.action == "request_changes" and not holdout:
        body.append(_("The request:") + "\n" + event.reason)
    body.append(_("The review: %(link)s") % {"link": _review_link(review)})
    return subject, "\n\n".join(body)


def _review_recipients(review, event, holdout):
    if REVIEW_NEXT_STEP[event.action] == "deciders":
        people = review_deciders(review)
    else:
        people = [review.author]
    return [
        person
        for person in people
        if person.email and person.is_active and (not holdout or holdout_access(person))
    ]


def notify_review_move(sender, review, event, **kwargs):
    """Connected to catalogue.signals.review_moved: queue, in the move's transaction, a
    message to each person who can act next, in English and Korean."""
    holdout = review.version.definition.task_set == TaskSet.HOLDOUT
    recipients = _review_recipients(review, event, holdout)
    if not recipients:
        return
    subject, body = _bilingual(lambda: _review_mail(review, event, holdout))
    for person in recipients:
        outbox_queue(to=person.email, subject=subject, body=body)


def _operator_guide_link():
    # In the active language: /ko/… for a Korean reader.
    return settings.SITE_URL + reverse("submissions:operator-guide")


def notify_operator_of_receipt(submission):
    """The operator's receipt: the submission's reference number and what happens next."""
    with translation.override(submission.language):
        subject = _("Your MICA system submission #%(id)s received") % {"id": submission.pk}
        body = _(
            "We received your system snapshot %(name)s %(version)s. Its reference number "
            "is #%(id)s: quote it whenever you write to us about it.\n\n"
            "MICA staff will accept the snapshot for evaluation, which registers it "
            "unchanged, or decline it with a reason; either decision is sent to this "
            "address. How to record attempts once it is registered:\n%(guide)s"
        ) % {
            "name": submission.name,
            "version": submission.version,
            "id": submission.pk,
            "guide": _operator_guide_link(),
        }
    outbox_queue(to=submission.contact_email, subject=subject, body=body)


def notify_operator_of_decision(submission):
    with translation.override(submission.language):
        # Not the receipt's subject: the decision says itself in the inbox.
        subject = _("Your MICA system submission #%(id)s decided: %(state)s") % {
            "id": submission.pk,
            "state": submission.get_state_display(),
        }
        body = _("Your system submission is now: %(state)s.\nReason: %(reason)s\n%(guide)s") % {
            "state": submission.get_state_display(),
            "reason": submission.decision_reason,
            "guide": _operator_guide_link(),
        }
    outbox_queue(to=submission.contact_email, subject=subject, body=body)


def notify_staff_of_submission(submission):
    """Tell the staff who may decide a system submission (accept or decline it)."""
    staff = (
        get_user_model()
        .objects.with_perm(
            "submissions.change_systemsubmission",
            backend="django.contrib.auth.backends.ModelBackend",
        )
        .filter(is_staff=True)
        .exclude(email="")
    )
    for member in staff:
        outbox_queue(
            to=member.email,
            subject=f"New system submission #{submission.pk}: "
            f"{submission.name} {submission.version}",
            body=f"A system snapshot waits for your decision.\n"
            f"{settings.SITE_URL}/admin/submissions/systemsubmission/{submission.pk}/change/",
        )
