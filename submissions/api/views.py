from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.authentication import TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from mica.api import NOT_AUTHENTICATED, NOT_JSON, TOO_LARGE_BODY, refusal
from mica.parsers import BoundedJSONLinesParser, BoundedJSONParser
from submissions.api.examples import attempt_examples
from submissions.ingest import ATTEMPT_RULES, AttemptSerializer, attempts_ingest_batch
from submissions.models import InvalidReason


class RecordedAttemptSerializer(serializers.Serializer):
    attempt_id = serializers.CharField(help_text=_("Your id for the attempt."))
    created = serializers.BooleanField(
        help_text=_("False when the same record was already on file: nothing new was stored.")
    )
    scored = serializers.BooleanField(
        help_text=_("Whether the publication gate counts the attempt in its cell.")
    )
    invalid_reason = serializers.ChoiceField(
        choices=InvalidReason.choices,
        allow_null=True,
        help_text=_(
            "Why a kept attempt is never scored: a model or a tool the snapshot does not "
            "declare. Null when there is none."
        ),
    )


class AttemptsRecordedSerializer(serializers.Serializer):
    recorded = serializers.IntegerField(help_text=_("How many attempts were stored now."))
    already_recorded = serializers.IntegerField(
        help_text=_("How many were already on file with the same content.")
    )
    attempts = RecordedAttemptSerializer(many=True, help_text=_("Each attempt, in batch order."))


@extend_schema_serializer(many=False)  # the examples are whole batches, not attempts to list
class AttemptBatchSerializer(serializers.ListSerializer):
    """A batch: attempts stored all or nothing."""

    child = AttemptSerializer()


def _naming_rules(message, status):
    """`message` with the rules that answer `status` listed in it, in the active language."""
    rules = ", ".join(
        f"`{rule}`" for rule, (code, _sentence) in ATTEMPT_RULES.items() if code == status
    )
    return lazy(lambda: str(message) % {"rules": rules}, str)()


class AttemptIngest(APIView):
    """Record attempts: one JSON object, or a list of them stored all or nothing."""

    authentication_classes = [TokenAuthentication]
    permission_classes = [IsAuthenticated]
    # A JSON array, or the JSON Lines file a run wrote, one attempt a line.
    parser_classes = [BoundedJSONParser, BoundedJSONLinesParser]

    @extend_schema(
        summary=_("Record one attempt or a batch of attempts (token authentication)"),
        description=_(
            "Send one attempt record, or a JSON array of them, or a JSON Lines file with one "
            "record a line (`Content-Type: application/jsonl`): a batch is stored all or "
            "nothing, and one refused attempt stores none. A refusal names the rule it "
            "broke in `errors.rule` and the attempt in `errors.index`. Each rule has a request "
            "example that breaks it and a response example of the same name."
        ),
        request=AttemptBatchSerializer(),
        responses={
            201: OpenApiResponse(
                AttemptsRecordedSerializer, description=_("At least one attempt was stored.")
            ),
            200: OpenApiResponse(
                AttemptsRecordedSerializer,
                description=_("Every attempt was already on file with the same content."),
            ),
            400: refusal(
                _naming_rules(_("A rule of the attempt record refused the batch: %(rules)s."), 400)
            ),
            401: NOT_AUTHENTICATED,
            403: refusal(
                _naming_rules(_("The token may not record this attempt: %(rules)s."), 403)
            ),
            413: TOO_LARGE_BODY,
            415: NOT_JSON,
        },
        examples=attempt_examples(),
    )
    def post(self, request):
        payloads = request.data if isinstance(request.data, list) else [request.data]
        results = attempts_ingest_batch(payloads=payloads, actor=request.user)
        created = sum(1 for _attempt, was_created in results if was_created)
        body = {
            "recorded": created,
            "already_recorded": len(results) - created,
            "attempts": [
                {
                    "attempt_id": a.attempt_id,
                    "created": c,
                    "scored": a.scored_eligible,
                    "invalid_reason": a.invalid_reason or None,
                }
                for a, c in results
            ],
        }
        return Response(body, status=201 if created else 200)
