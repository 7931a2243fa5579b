"""The API frame: root, error mapping. Each app adds its endpoints under /api/v1/."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from mica.errors import DomainError
from mica.parsers import TOO_LARGE, in_request_language

# Each app appends (name, url name) when it adds an endpoint.
API_ENDPOINTS = [
    ("schema", "api-schema"),
    ("health", "healthz"),
    ("markets", "api-market-list"),
    ("families", "api-family-list"),
    ("tasks", "api-task-list"),
    ("editions", "api-edition-list"),
    ("methodology", "api-methodology"),
    ("references", "api-reference-list"),
    ("glossary", "api-glossary"),
    ("facts", "api-facts"),
    ("cells", "api-cell-list"),
    ("disclosures", "api-disclosures"),
    ("decision-rights", "api-decision-rights"),
    ("corrections", "api-corrections"),
]


class ApiRoot(APIView):
    """Where the API starts: links to every collection it serves."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary=_("API root: links to every collection"),
        responses=inline_serializer(
            "ApiRoot",
            {
                "version": serializers.CharField(),
                "endpoints": serializers.DictField(child=serializers.URLField()),
            },
        ),
    )
    def get(self, request):
        endpoints = {
            # The configured site, never the Host header the request came with.
            name: settings.SITE_URL + reverse(url_name)
            for name, url_name in API_ENDPOINTS
        }
        return Response({"version": "1", "endpoints": endpoints})


def flat_errors(errors, prefix=""):
    """{"invocations": [{}, {"cost": [...]}]} -> {"invocations.1.cost": [...]}: every refusal
    keyed by the path of the field it names, however deep."""
    flat = {}
    items = errors.items() if isinstance(errors, dict) else enumerate(errors)
    for key, value in items:
        path = f"{prefix}{key}"
        nested = isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)
        )
        if nested:
            flat.update(flat_errors(value, f"{path}."))
        else:
            flat[path] = [str(m) for m in (value if isinstance(value, list) else [value])]
    return flat


def exception_handler(exc, context):
    """Domain errors become 400/403/409 with their message; never a 500."""
    if isinstance(exc, DomainError):
        body = {"detail": str(exc.message)}
        if exc.field_errors:
            body["errors"] = flat_errors(exc.field_errors)
        return Response(body, status=exc.status_code)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        detail = in_request_language(context["request"], TOO_LARGE, limit=limit)
        return Response({"detail": detail}, status=413)
    return drf_exception_handler(exc, context)
