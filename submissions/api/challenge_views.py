from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import Throttled
from rest_framework.response import Response
from rest_framework.views import APIView

from mica.api import NOT_JSON, THROTTLED, TOO_LARGE_BODY, refusal
from mica.clients import client_address
from submissions.api.examples import (
    CHALLENGE,
    CHALLENGE_REFUSALS,
    SYSTEM_SUBMISSION,
    SYSTEM_SUBMISSION_REFUSALS,
    refusal_examples,
)
from submissions.challenges import ChallengeSerializer, challenge_file
from submissions.selectors import challenge_public_list
from submissions.system_submissions import SystemSubmissionSerializer, system_submission_file
from submissions.throttle import intake_allowed


def challenge_recompute_json(challenge):
    """The portal's recompute with its verdict ("reproduced" or "differs"), every digit
    kept; None for a challenge that is not (or not yet) recomputed."""
    if not challenge.recompute:
        return None
    return {**challenge.recompute, "verdict": challenge.recompute_verdict}


def challenge_json(challenge):
    return {
        "id": challenge.pk,
        "edition": challenge.edition.slug,
        "section_id": challenge.section_id,
        "type": challenge.challenge_type,
        "state": challenge.state,
        "what_is_wrong": challenge.what_is_wrong,
        "proposed_replacement": challenge.proposed_replacement,
        "evidence": challenge.evidence,
        "recompute": challenge_recompute_json(challenge),
        "public_name": challenge.public_name or None,
        "received_at": challenge.received_at,
        "decisions": [
            {"action": e.action, "to": e.to_state, "role": e.role, "reason": e.reason, "at": e.at}
            for e in challenge.events.all()
        ],
    }


class ChallengeFiledSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text=_("The challenge's reference number."))
    state = serializers.CharField(help_text=_("Its state: received, until it is screened."))
    next = serializers.CharField(help_text=_("What the filer does next."))


class SystemSubmissionReceivedSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text=_("The submission's reference number."))
    state = serializers.CharField(help_text=_("Its state: received, until staff decide."))
    next = serializers.CharField(help_text=_("What happens next."))


class Challenges(APIView):
    """The public register (screened challenges only), and filing a new challenge."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary=_("Public challenges and their decisions"), responses=OpenApiTypes.OBJECT
    )
    def get(self, request):
        challenges = challenge_public_list()[:200]
        return Response({"results": [challenge_json(c) for c in challenges]})

    @extend_schema(
        summary=_("File a section-referenced challenge"),
        description=_(
            "Files a challenge, private until its contact e-mail is confirmed through the "
            "link sent to it and an editor screens it. Sending the same idempotency key "
            "with the same challenge again answers the same record (200)."
        ),
        request=ChallengeSerializer,
        responses={
            201: OpenApiResponse(ChallengeFiledSerializer, description=_("Filed.")),
            200: OpenApiResponse(
                ChallengeFiledSerializer,
                description=_("Already filed with this idempotency key: the same record."),
            ),
            400: refusal(_("A field is missing or breaks a rule of its challenge type.")),
            409: refusal(
                _("The idempotency key was already used by this filer for another challenge.")
            ),
            413: TOO_LARGE_BODY,
            415: NOT_JSON,
            429: THROTTLED,
        },
        examples=[
            OpenApiExample(
                "method-challenge",
                summary=_("A method challenge with a citation"),
                value=CHALLENGE,
                request_only=True,
            ),
            *refusal_examples(CHALLENGE_REFUSALS),
        ],
    )
    def post(self, request):
        if not isinstance(request.data, dict):
            return Response({"detail": "A challenge is a JSON object."}, status=400)
        if not intake_allowed(
            address=client_address(request), email=str(request.data.get("contact_email", ""))
        ):
            raise Throttled()
        challenge, created = challenge_file(payload=request.data)
        return Response(
            {
                "id": challenge.pk,
                "state": challenge.state,
                "next": _("Confirm your e-mail address through the link we sent."),
            },
            status=201 if created else 200,
        )


class SystemSubmissions(APIView):
    """Submit a declared system snapshot for evaluation."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary=_("Submit a system snapshot for evaluation"),
        description=_(
            "Files a declared snapshot. The answer carries its reference number, and a "
            "receipt with it goes to the contact e-mail; MICA staff then accept it, which "
            "registers the snapshot unchanged under a slug of its own, or decline it with "
            "a reason. No field takes a score, a ranking, a weighting or a payment."
        ),
        request=SystemSubmissionSerializer,
        responses={
            201: OpenApiResponse(
                SystemSubmissionReceivedSerializer, description=_("Received, with its reference.")
            ),
            400: refusal(
                _("A field is missing or breaks its rule, or asks to store a score or money.")
            ),
            413: TOO_LARGE_BODY,
            415: NOT_JSON,
            429: THROTTLED,
        },
        examples=[
            OpenApiExample(
                "harbor-agent",
                summary=_("Harbor Agent 2026.11, for KR and JP"),
                value=SYSTEM_SUBMISSION,
                request_only=True,
            ),
            *refusal_examples(SYSTEM_SUBMISSION_REFUSALS),
        ],
    )
    def post(self, request):
        email = request.data.get("contact_email", "") if isinstance(request.data, dict) else ""
        if not intake_allowed(address=client_address(request), email=str(email)):
            raise Throttled()
        submission = system_submission_file(payload=request.data)
        return Response(
            {
                "id": submission.pk,
                "state": submission.state,
                "next": _(
                    "A receipt with this reference number is on its way to the contact e-mail."
                ),
            },
            status=201,
        )
