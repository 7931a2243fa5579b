"""The API frame: root, error mapping. Each app adds its endpoints under /api/v1/."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.urls import reverse
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
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


class TokenScheme(OpenApiAuthenticationExtension):
    """The token scheme as an operator needs it described: the header, and where the key
    comes from."""

    target_class = "mica.api_auth.ApiTokenAuthentication"
    name = "tokenAuth"
    match_subclasses = True
    # Ahead of drf-spectacular's own description of knox's tokens (a bearer scheme).
    priority = 1

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": TOKEN_HOW_TO,
        }


def _guide_address():
    return settings.SITE_URL + reverse("submissions:operator-guide")


TOKEN_HOW_TO = lazy(
    lambda: (
        str(
            _(
                "Send the header Authorization: Token <key>, with the word Token, a space and "
                "your key. MICA staff issue a key to the operator account of an accepted system "
                "(in the admin, under API tokens, where it is shown once and only its first "
                "characters afterwards) and send it to the submission's contact address; "
                "keep it secret. The operator guide walks through it: %(guide)s"
            )
        )
        % {"guide": _guide_address()}
    ),
    str,
)()


class ApiErrorSerializer(serializers.Serializer):
    """Every refusal of the API has this shape, in the request's language."""

    detail = serializers.CharField(
        help_text=_("What was refused and why, in the language of Accept-Language.")
    )
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text=_(
            "Each refusal keyed by the path of what it names (invocations.1.cost_usd); "
            "rule names the rule of the method that refused, index the attempt of a batch."
        ),
    )


def refusal(description, examples=()):
    """A documented error answer: the error body, what it means, and its examples."""
    return OpenApiResponse(ApiErrorSerializer, description=description, examples=list(examples))


def _answer(name, summary, detail):
    return OpenApiExample(name, summary=summary, value={"detail": detail}, response_only=True)


# The messages are Django REST framework's own, translated by its catalogue.
NOT_AUTHENTICATED = refusal(
    _("No token was sent, or the token is not valid."),
    [
        _answer("no-token", _("No token sent"), exceptions.NotAuthenticated.default_detail),
        _answer("token-not-valid", _("A token that is not valid"), _("Invalid token.")),
    ],
)
TOO_LARGE_BODY = refusal(
    _("The body is larger than the API accepts."),
    [
        _answer(
            "too-large",
            _("A body too large"),
            lazy(lambda: str(TOO_LARGE) % {"limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}, str)(),
        )
    ],
)
NOT_JSON = refusal(
    _("The body came with a Content-Type the endpoint does not read."),
    [
        _answer(
            "not-json",
            _("A body that is not JSON"),
            lazy(
                lambda: str(exceptions.UnsupportedMediaType.default_detail).format(
                    media_type="text/plain"
                ),
                str,
            )(),
        )
    ],
)
THROTTLED = refusal(
    _("Too many filings from this address or for this contact e-mail in the last hour."),
    [_answer("throttled", _("Too many filings"), exceptions.Throttled.default_detail)],
)


# The key under which DRF files a refusal of a whole object rather than of one field.
WHOLE_OBJECT = api_settings.NON_FIELD_ERRORS_KEY


def flat_errors(errors, prefix=""):
    """{"invocations": [{}, {"cost": [...]}]} -> {"invocations.1.cost": [...]}: every refusal
    keyed by the path of the field it names, however deep.

    A refusal of a whole object is keyed by the object's own path ("citations.1"), never by
    DRF's "non_field_errors", which names nothing a sender wrote; one of the whole body by
    "body".
    """
    flat = {}
    items = errors.items() if isinstance(errors, dict) else enumerate(errors)
    for key, value in items:
        path = f"{prefix}{key}" if key != WHOLE_OBJECT else (prefix.rstrip(".") or "body")
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
