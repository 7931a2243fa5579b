"""System snapshot submissions: a declared composition in, an immutable snapshot out."""

import re

from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _
from rest_framework import serializers

from catalogue.selectors import family_list
from markets.selectors import market_list
from mica.errors import PermissionRefused, ValidationFailed
from mica.text import plain
from mica.workflows import Move, workflow_move
from submissions.challenges import MAX_TEXT
from submissions.models import (
    DataStatus,
    SubmissionState,
    System,
    SystemSnapshot,
    SystemSubmission,
    SystemSubmissionEvent,
    Track,
)

# No submitter-supplied score, ranking or weighting is ever stored, and no field takes payment.
FORBIDDEN_KEY = re.compile(r"score|rank|weight|payment|price|fee|sponsor", re.IGNORECASE)


class SystemSubmissionSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    operator = serializers.CharField(max_length=120)
    version = serializers.CharField(max_length=60)
    snapshot_date = serializers.DateField()
    orchestrator = serializers.CharField(max_length=200)
    routable_models = serializers.ListField(
        child=serializers.CharField(max_length=120), min_length=1, max_length=100
    )
    tools = serializers.ListField(
        child=serializers.CharField(max_length=120), min_length=1, max_length=200
    )
    memory = serializers.CharField(max_length=MAX_TEXT)
    markets = serializers.ListField(child=serializers.CharField(max_length=2), min_length=1)
    families = serializers.ListField(child=serializers.CharField(max_length=60), min_length=1)
    market_capability = serializers.DictField(
        child=serializers.CharField(max_length=2000), required=False, default=dict
    )
    access = serializers.CharField(max_length=MAX_TEXT)
    evidence_plan = serializers.CharField(max_length=MAX_TEXT)
    contact_email = serializers.EmailField()

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


def _forbidden_fields(payload, prefix=""):
    found = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if FORBIDDEN_KEY.search(str(key)):
                found.append(prefix + str(key))
            found += _forbidden_fields(value, prefix + str(key) + ".")
    return found


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
    return SystemSubmission.objects.create(
        **texts,
        snapshot_date=data["snapshot_date"],
        routable_models=data["routable_models"],
        tools=data["tools"],
        markets=data["markets"],
        families=data["families"],
        market_capability=data["market_capability"],
        contact_email=data["contact_email"],
    )


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
            system, _created = System.objects.get_or_create(
                slug=slugify(f"{submission.operator}-{submission.name}")[:80],
                defaults={"name": submission.name, "operator": submission.operator},
            )
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
    return submission
