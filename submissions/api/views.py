from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import TokenAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from submissions.ingest import AttemptSerializer, attempts_ingest_batch


class AttemptIngest(APIView):
    """Record attempts: one JSON object, or a list of them stored all or nothing."""

    authentication_classes = [TokenAuthentication]
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary=_("Record one attempt or a batch of attempts (token authentication)"),
        request=AttemptSerializer(many=True),
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
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
