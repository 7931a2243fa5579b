from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import Throttled
from rest_framework.response import Response
from rest_framework.views import APIView

from mica.clients import client_address
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
        request=ChallengeSerializer,
        responses={201: OpenApiTypes.OBJECT},
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
                "next": "Confirm your e-mail address through the link we sent.",
            },
            status=201 if created else 200,
        )


class SystemSubmissions(APIView):
    """Submit a declared system snapshot for evaluation."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary=_("Submit a system snapshot for evaluation"),
        request=SystemSubmissionSerializer,
        responses={201: OpenApiTypes.OBJECT},
    )
    def post(self, request):
        email = request.data.get("contact_email", "") if isinstance(request.data, dict) else ""
        if not intake_allowed(address=client_address(request), email=str(email)):
            raise Throttled()
        submission = system_submission_file(payload=request.data)
        return Response({"id": submission.pk, "state": submission.state}, status=201)
