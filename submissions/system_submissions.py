"""System snapshot submissions: a declared composition in, an immutable snapshot out."""

import re
from datetime import date, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from catalogue.selectors import family_list
from markets.selectors import market_list
from mica.bilingual import LANGUAGES
from mica.content.changes import writes_not_public
from mica.errors import PermissionRefused, ValidationFailed
from mica.text import plain
from mica.workflows import Move, workflow_move
from submissions.challenges import MAX_TEXT, request_language
from submissions.models import (
    DataStatus,
    SubmissionState,
    System,
    SystemSnapshot,
    SystemSubmission,
    SystemSubmissionEvent,
    Track,
)
from submissions.outbox import (
    notify_operator_of_decision,
    notify_operator_of_receipt,
    notify_staff_of_submission,
)

# No submitter-supplied score, ranking or weighting is ever stored, and no field takes payment.
FORBIDDEN_KEY = re.compile(r"score|rank|weight|payment|price|fee|sponsor", re.IGNORECASE)


CAPABILITY_KEY_LENGTH = 64
CAPABILITY_KEY = re.compile(
    rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{CAPABILITY_KEY_LENGTH - 1}}}", re.ASCII
)
MAX_CAPABILITIES = 50
CAPABILITY_TEXT = 2000


class CapabilityField(serializers.DictField):
    """What the system can do, by market or channel: a short identifier to a short text.

    The keys are checked before anything else, so no refusal ever repeats a huge or
    hostile key back to the sender.
    """

    child = serializers.CharField(max_length=CAPABILITY_TEXT)

    def to_internal_value(self, data):
        if isinstance(data, dict):
            if len(data) > MAX_CAPABILITIES:
                self.fail("too_many", count=MAX_CAPABILITIES)
            if not all(isinstance(k, str) and CAPABILITY_KEY.fullmatch(k) for k in data):
                self.fail("bad_key", length=CAPABILITY_KEY_LENGTH)
        return super().to_internal_value(data)

    default_error_messages = {
        "too_many": gettext_lazy("Declare at most {count} capabilities."),
        "bad_key": gettext_lazy(
            "A capability is named by a short identifier: up to {length} Latin letters, "
            "digits, dots, hyphens or underscores, starting with a letter or digit (a "
            "market code such as KR, say)."
        ),
    }


# The furthest time zone is UTC+14: a snapshot frozen "today" there is no future one.
LATEST_UTC_OFFSET = timedelta(hours=14)


def latest_snapshot_date():
    """The last date that is not yet in the future anywhere on Earth."""
    return (timezone.now() + LATEST_UTC_OFFSET).date()


# No agent system a record describes ran before this: an earlier date is a typing error.
EARLIEST_RECORD_DATE = date(2000, 1, 1)


class SystemSubmissionSerializer(serializers.Serializer):
    name = serializers.CharField(
        max_length=120,
        help_text=gettext_lazy(
            "The system's name, in any script; the slug is chosen from it on acceptance."
        ),
    )
    operator = serializers.CharField(
        max_length=120,
        help_text=gettext_lazy("Who operates the system: a company, a lab or a person."),
    )
    version = serializers.CharField(
        max_length=60,
        help_text=gettext_lazy("The snapshot's version: any later change is a new snapshot."),
    )
    snapshot_date = serializers.DateField(
        help_text=gettext_lazy(
            "The date the snapshot was frozen, YYYY-MM-DD; never a date to come."
        )
    )
    orchestrator = serializers.CharField(
        max_length=200,
        help_text=gettext_lazy(
            "The scaffold or orchestrator that runs the system, with its version."
        ),
    )
    routable_models = serializers.ListField(
        child=serializers.CharField(max_length=120),
        min_length=1,
        max_length=100,
        help_text=gettext_lazy("Every model the system may route to, as provider/model."),
    )
    tools = serializers.ListField(
        child=serializers.CharField(max_length=120),
        min_length=1,
        max_length=200,
        help_text=gettext_lazy("Every tool and API the system may call."),
    )
    memory = serializers.CharField(
        max_length=MAX_TEXT,
        help_text=gettext_lazy("What the system remembers, within and between attempts."),
    )
    markets = serializers.ListField(
        child=serializers.CharField(max_length=2),
        min_length=1,
        help_text=gettext_lazy("The markets in scope, by code (KR, JP, SG, TW, AE, TH)."),
    )
    families = serializers.ListField(
        child=serializers.CharField(max_length=60),
        min_length=1,
        help_text=gettext_lazy("The task families in scope, by id."),
    )
    market_capability = CapabilityField(
        required=False,
        default=dict,
        help_text=gettext_lazy("What the system can do in each market, keyed by market code."),
    )
    access = serializers.CharField(
        max_length=MAX_TEXT,
        help_text=gettext_lazy(
            "How MICA-controlled accounts reach the system. Never send secrets, tokens or codes."
        ),
    )
    evidence_plan = serializers.CharField(
        max_length=MAX_TEXT,
        help_text=gettext_lazy(
            "What evidence traces the system keeps, and how MICA receives them."
        ),
    )
    contact_email = serializers.EmailField(
        help_text=gettext_lazy(
            "Where the receipt, the decision and, once accepted, the token are sent."
        )
    )
    language = serializers.ChoiceField(
        choices=LANGUAGES,
        default=request_language,
        help_text=gettext_lazy("The language of the e-mails: en or ko; by default the request's."),
    )

    def validate_snapshot_date(self, value):
        # A snapshot is a system as it was frozen: a date to come describes no snapshot.
        if value > latest_snapshot_date():
            raise serializers.ValidationError(
                _("The snapshot date is in the future: give the date the snapshot was frozen.")
            )
        if value < EARLIEST_RECORD_DATE:
            raise serializers.ValidationError(
                _("The snapshot date is before 2000: give the date the snapshot was frozen.")
            )
        return value

    def validate_markets(self, value):
        known = {m.code for m in market_list()}
        unknown = [v for v in value if v not in known]
        if unknown:
            raise serializers.ValidationError(
                _("Unknown markets: %(codes)s.") % {"codes": ", ".join(unknown)}
            )
        return value

    def validate_families(self, value):
        known = {f.slug for f in family_list()}
        unknown = [v for v in value if v not in known]
        if unknown:
            raise serializers.ValidationError(
                _("Unknown task families: %(ids)s.") % {"ids": ", ".join(unknown)}
            )
        return value


def _forbidden_fields(payload):
    """Every key, at any depth of nested objects, that asks to store a number or money.

    A loop rather than recursion: how deep a body nests is the sender's choice.
    """
    found, pending = [], [("", payload)]
    while pending:
        prefix, value = pending.pop()
        if isinstance(value, dict):
            for key, inner in value.items():
                name = prefix + str(key)
                if FORBIDDEN_KEY.search(str(key)):
                    found.append(name)
                pending.append((name + ".", inner))
    return sorted(found)


def system_submission_file(*, payload):
    if not isinstance(payload, dict):
        raise ValidationFailed(_("A submission is a JSON object."))
    forbidden = _forbidden_fields(payload)
    if forbidden:
        raise ValidationFailed(
            _("Self-supplied scores, rankings, weightings or payments are never accepted."),
            field_errors={
                name: [
                    _(
                        "This field is refused: MICA measures, it does not take "
                        "numbers or money from submitters."
                    )
                ]
                for name in forbidden
            },
        )
    serializer = SystemSubmissionSerializer(data=payload)
    if not serializer.is_valid():
        raise ValidationFailed(
            _("The submission was not received."), field_errors=serializer.errors
        )
    data = serializer.validated_data
    texts = {
        key: plain(data[key])
        for key in (
            "name",
            "operator",
            "version",
            "orchestrator",
            "memory",
            "access",
            "evidence_plan",
        )
    }
    # Pending until staff accept it: no reader's page changes (mica.content.changes).
    # The receipt is queued with the submission, so one is never sent without the other.
    with transaction.atomic(), writes_not_public():
        submission = SystemSubmission.objects.create(
            **texts,
            snapshot_date=data["snapshot_date"],
            routable_models=data["routable_models"],
            tools=data["tools"],
            markets=data["markets"],
            families=data["families"],
            market_capability=data["market_capability"],
            contact_email=data["contact_email"],
            language=data["language"],
        )
        notify_operator_of_receipt(submission)
        notify_staff_of_submission(submission)
    return submission


SLUG_LENGTH = System._meta.get_field("slug").max_length


def system_slug_base(name):
    """The slug a name asks for: its Latin letters and digits joined by hyphens, or
    `system` for a name without any (a Korean name, say); numbers tell them apart.

    ASCII, so the slug is the same in every link, export and attempt record
    (submissions.ingest takes `[-a-zA-Z0-9_]`).
    """
    base = slugify(name.replace("_", " ")).strip("-")
    return base[: SLUG_LENGTH - 6].rstrip("-") or "system"


def _system_create(*, name, operator):
    """A new system with a slug of its own: `name`, else `name-2`, `name-3`, ….

    Each accepted submission is its own system: two systems of the same name (two
    operators' "에이전트", say) never merge, and a slug, once given, never changes.
    The name itself is kept as sent, in any script.
    """
    base = system_slug_base(name)
    taken = set(System.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    number = 1
    while True:
        slug = base if number == 1 else f"{base}-{number}"
        number += 1
        if slug in taken:
            continue
        try:
            # A savepoint: a slug taken meanwhile by another acceptance tries the next.
            with transaction.atomic():
                return System.objects.create(slug=slug, name=name, operator=operator)
        except IntegrityError:
            if not System.objects.filter(slug=slug).exists():
                raise
            taken.add(slug)


SUBMISSION_TRANSITIONS = {
    (SubmissionState.RECEIVED, "accept"): Move(SubmissionState.ACCEPTED, "staff"),
    (SubmissionState.RECEIVED, "decline"): Move(SubmissionState.DECLINED, "staff"),
}


def system_submission_decide(*, submission_id, accept, reason, actor):
    """Accept (creating the immutable snapshot) or decline with a reason; staff only."""
    if not getattr(actor, "is_staff", False):
        raise PermissionRefused(_("Only MICA staff decide on submissions."))
    if not plain(reason):
        raise ValidationFailed(_("Every decision needs a reason."))
    with transaction.atomic():
        submission = SystemSubmission.objects.select_for_update().get(pk=submission_id)
        action = "accept" if accept else "decline"
        move = workflow_move(
            SUBMISSION_TRANSITIONS,
            submission.state,
            action,
            _("This submission has already been decided."),
        )
        source = submission.state
        submission.decision_reason = plain(reason)
        if accept:
            system = _system_create(name=submission.name, operator=submission.operator)
            submission.snapshot = SystemSnapshot.objects.create(
                system=system,
                version=submission.version,
                snapshot_date=submission.snapshot_date,
                orchestrator=submission.orchestrator,
                routable_models=submission.routable_models,
                tools=submission.tools,
                memory=submission.memory,
                market_capability=submission.market_capability,
                track=Track.SIMULATOR,
                data_status=DataStatus.OFFICIAL,
            )
        submission.state = move.target
        submission.save()
        SystemSubmissionEvent.objects.create(
            submission=submission,
            action=action,
            from_state=source,
            to_state=move.target,
            role=move.role,
            actor=actor,
            reason=submission.decision_reason,
        )
        notify_operator_of_decision(submission)
    return submission
