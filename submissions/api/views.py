from django.conf import settings
from django.db import transaction
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from mica.api import NOT_AUTHENTICATED, NOT_JSON, TOO_LARGE_BODY, refusal
from mica.api_auth import ApiTokenAuthentication
from mica.parsers import BoundedJSONLinesParser, BoundedJSONParser, in_request_language
from submissions.api.examples import attempt_examples
from submissions.api.sandbox import SandboxWorld, examples_story
from submissions.ingest import (
    ATTEMPT_RULES,
    AttemptSerializer,
    attempts_counted,
    attempts_ingest_batch,
)
from submissions.models import InvalidReason
from submissions.throttle import AttemptRecordingThrottle

BATCH_TOO_LARGE = _(
    "A batch holds at most %(maximum)d attempts and this one holds %(count)d: send it in "
    "batches of %(maximum)d or fewer. Nothing was stored."
)
BATCH_MAXIMUM = _(
    "A batch holds at most %(maximum)d attempts; a larger one is refused with 413 before "
    "anything is stored."
)


def attempt_batch_max():
    """The most attempts one request may carry (settings.ATTEMPT_BATCH_MAX)."""
    return settings.ATTEMPT_BATCH_MAX


class RecordedAttemptSerializer(serializers.Serializer):
    attempt_id = serializers.CharField(help_text=_("Your id for the attempt."))
    created = serializers.BooleanField(
        help_text=_("False when the same record was already on file: nothing new was stored.")
    )
    would_create = serializers.BooleanField(
        required=False,
        help_text=_("On a dry run: whether a real call would store this attempt now."),
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
    invalid_reason_sentence = serializers.CharField(
        allow_null=True,
        help_text=_("The same reason as a sentence, in the request's language; null with it."),
    )


class AttemptsRecordedSerializer(serializers.Serializer):
    recorded = serializers.IntegerField(help_text=_("How many attempts were stored now."))
    already_recorded = serializers.IntegerField(
        help_text=_("How many were already on file with the same content.")
    )
    would_record = serializers.IntegerField(
        required=False,
        help_text=_("On a dry run: how many attempts a real call would store now."),
    )
    attempts = RecordedAttemptSerializer(many=True, help_text=_("Each attempt, in batch order."))
    dry_run = serializers.BooleanField(
        required=False,
        help_text=_(
            "Present and true on a dry run: the answer a real call would get, with nothing stored."
        ),
    )
    sandbox = serializers.BooleanField(
        required=False,
        help_text=_("Present and true when the call ran in the examples' sandbox."),
    )


def _flag(request, name):
    return request.query_params.get(name) in ("1", "true")


# The console of the API reference sends its examples with it: checked and answered as a
# real call, stored nowhere, so trying the API never records on a real snapshot.
DRY_RUN = OpenApiParameter(
    "dry_run",
    bool,
    OpenApiParameter.QUERY,
    description=_(
        "With dry_run=1 the batch is checked as it would be, refused as it would be, and "
        "nothing is stored (no attempt, no cell recomputed); an accepted batch answers 200 "
        "with what a real call would record now (would_record, and would_create for each "
        "attempt)."
    ),
)
SANDBOX = OpenApiParameter(
    "sandbox",
    bool,
    OpenApiParameter.QUERY,
    description=_(
        "Set to 1, a dry run in the world the examples tell of: Harbor Agent 2026.11 "
        "as your snapshot, its earlier attempt harbor-kr-0000, another operator's agent "
        "and the platform sets the examples name are set up for the call and removed "
        "with everything it wrote, so each example gets its documented answer."
    ),
)


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


def _with_maximum(message, **params):
    """`message` in the active language, naming the batch maximum in force."""
    return lazy(lambda: str(message) % {"maximum": attempt_batch_max(), **params}, str)()


# The body limit's answer, and the batch maximum's: both documented under 413.
TOO_LARGE = refusal(
    lazy(lambda: f"{TOO_LARGE_BODY.description} {_with_maximum(BATCH_MAXIMUM)}", str)(),
    [
        *TOO_LARGE_BODY.examples,
        OpenApiExample(
            "too-many-attempts",
            summary=_("A batch of more attempts than the maximum"),
            value={
                "detail": lazy(
                    lambda: (
                        str(BATCH_TOO_LARGE)
                        % {"maximum": attempt_batch_max(), "count": attempt_batch_max() + 1}
                    ),
                    str,
                )()
            },
            response_only=True,
        ),
    ],
)


RECORDING = _(
    "Send one attempt record, or a JSON array of them, or a JSON Lines file with one "
    "record a line (`Content-Type: application/jsonl`): a batch is stored all or "
    "nothing, and one refused attempt stores none. A refusal names the rule it "
    "broke in `errors.rule` and the attempt in `errors.index`. Each rule has a request "
    "example that breaks it and a response example of the same name."
)


INVALID_SENTENCE = _("Kept, and never scored: %(reason)s.")


def _invalid_sentence(code):
    """A kept attempt's reason for never being scored, as a sentence in the request's
    language: the code alone (`undeclared-model`) tells a reader nothing."""
    return str(INVALID_SENTENCE) % {"reason": InvalidReason(code).label} if code else None


def _dry_run_answer(recorded):
    """200, and what a real call would record now: nothing was recorded."""
    attempts = [
        {**attempt, "created": False, "would_create": attempt["created"]}
        for attempt in recorded["attempts"]
    ]
    answer = {
        "recorded": 0,
        "already_recorded": recorded["already_recorded"],
        "would_record": recorded["recorded"],
        "attempts": attempts,
        "dry_run": True,
    }
    return Response(answer, status=200)


class AttemptIngest(APIView):
    """Record attempts: one JSON object, or a list of them stored all or nothing."""

    authentication_classes = [ApiTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [AttemptRecordingThrottle]
    # A JSON array, or the JSON Lines file a run wrote, one attempt a line.
    parser_classes = [BoundedJSONParser, BoundedJSONLinesParser]

    @extend_schema(
        summary=_("Record one attempt or a batch of attempts (token authentication)"),
        description=lazy(lambda: f"{RECORDING} {_with_maximum(BATCH_MAXIMUM)}", str)(),
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
            413: TOO_LARGE,
            415: NOT_JSON,
        },
        examples=attempt_examples(),
        parameters=[DRY_RUN, SANDBOX],
    )
    def post(self, request):
        sandbox = _flag(request, "sandbox")
        if sandbox or _flag(request, "dry_run"):
            with transaction.atomic():
                world = SandboxWorld() if sandbox else None
                if world:
                    examples_story(request.user, world)
                    response = self._record(request, world.hidden(request.data))
                    response.data = world.shown(response.data)
                else:
                    response = self._record(request)
                # Everything the batch (and the story) wrote goes, and the steps after a
                # commit never run.
                transaction.set_rollback(True)
            if response.status_code >= 300:
                # A refusal reads as a real call's: it stored nothing either way.
                return response
            if sandbox:
                # The examples' own world: each example answers as the schema documents.
                response.data.update(dry_run=True, sandbox=True)
                return response
            return _dry_run_answer(response.data)
        return self._record(request)

    def _record(self, request, data=None):
        data = request.data if data is None else data
        payloads = data if isinstance(data, list) else [data]
        maximum = attempt_batch_max()
        if len(payloads) > maximum:
            detail = in_request_language(
                request, BATCH_TOO_LARGE, maximum=maximum, count=len(payloads)
            )
            return Response({"detail": detail}, status=413)
        results = attempts_ingest_batch(payloads=payloads, actor=request.user)
        created = sum(1 for _attempt, was_created in results if was_created)
        counted = attempts_counted([attempt for attempt, _created in results])
        body = {
            "recorded": created,
            "already_recorded": len(results) - created,
            "attempts": [
                {
                    "attempt_id": a.attempt_id,
                    "created": c,
                    "scored": a.pk in counted,
                    "invalid_reason": a.invalid_reason or None,
                    "invalid_reason_sentence": _invalid_sentence(a.invalid_reason),
                }
                for a, c in results
            ],
        }
        return Response(body, status=201 if created else 200)
