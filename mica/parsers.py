"""The API's JSON parser: bounded depth and key length, no unstorable text.

The body's size is bounded before it is parsed: DRF reads it through request.body,
which refuses more than DATA_UPLOAD_MAX_MEMORY_SIZE (mica.api answers 413).
Registered in REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]; kept apart from mica.api,
which imports rest_framework.views (that module reads the settings naming this one).
"""

import re

from django.utils import translation
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.parsers import BaseParser, JSONParser, get_encoding
from rest_framework.utils import json

# No record of the method nests deeper than a few levels or names a field this long;
# bodies beyond these are refused before any view runs.
JSON_MAX_DEPTH = 32
JSON_MAX_KEY_LENGTH = 200
# A NUL or a lone surrogate is no text any field can hold, and PostgreSQL refuses
# both: refused at the door rather than failing the write.
UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")

TOO_DEEP = _("The JSON body is nested more than %(limit)d levels deep.")
KEY_TOO_LONG = _("A key of the JSON body is longer than %(limit)d characters.")
UNSTORABLE = _(
    "The JSON body holds a NUL character or an unpaired surrogate, which no text field accepts."
)
TOO_LARGE = _("The request body is larger than the %(limit)d bytes the API accepts.")


def in_request_language(request, message, **params):
    """The message in the reader's language: /api/ has no language prefix, so their
    Accept-Language (or language cookie) says which."""
    with translation.override(translation.get_language_from_request(request)):
        return str(message) % params if params else str(message)


class BoundedJSONParser(JSONParser):
    """JSON bodies with a bounded nesting depth and key length, and no unstorable text.

    Answers 400 naming the bound it broke: without it, a body nested a thousand levels
    deep ran a view out of stack (a 500) and a NUL reached PostgreSQL (another 500).
    """

    def parse(self, stream, media_type=None, parser_context=None):
        return bounded_json(decoded(stream, parser_context), parser_context["request"])


def decoded(stream, parser_context):
    """The body as text; bytes that are not in its encoding are refused with 400."""
    try:
        return stream.read().decode(get_encoding(parser_context))
    except UnicodeDecodeError as exc:
        raise exceptions.ParseError(f"JSON parse error - {exc}") from exc


def bounded_json(text, request):
    """The JSON value of `text`, refused with 400 when it breaks a bound."""

    def refuse(message, **params):
        raise exceptions.ParseError(in_request_language(request, message, **params))

    def checked_object(pairs):
        for key, _value in pairs:
            if len(key) > JSON_MAX_KEY_LENGTH:
                refuse(KEY_TOO_LONG, limit=JSON_MAX_KEY_LENGTH)
            if UNSTORABLE_TEXT.search(key):
                refuse(UNSTORABLE)
        return dict(pairs)

    try:
        data = json.loads(text, object_pairs_hook=checked_object)
    except RecursionError:
        refuse(TOO_DEEP, limit=JSON_MAX_DEPTH)
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise exceptions.ParseError(f"JSON parse error - {exc}") from exc
    # Each container with its depth, on a stack: the check itself never recurses.
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str) and UNSTORABLE_TEXT.search(value):
            refuse(UNSTORABLE)
        if isinstance(value, (dict, list)):
            if depth > JSON_MAX_DEPTH:
                refuse(TOO_DEEP, limit=JSON_MAX_DEPTH)
            children = value.values() if isinstance(value, dict) else value
            pending.extend((child, depth + 1) for child in children)
    return data


LINE_NOT_JSON = _("Line %(line)d of the JSON Lines body is not JSON: %(error)s")


class BoundedJSONLinesParser(BaseParser):
    """JSON Lines (one JSON value a line, blank lines skipped) as a list, each line under
    the bounds of a JSON body: an operator's run file, sent as it is."""

    media_type = "application/jsonl"

    def parse(self, stream, media_type=None, parser_context=None):
        request = parser_context["request"]
        values = []
        for number, line in enumerate(decoded(stream, parser_context).splitlines(), start=1):
            if not line.strip():
                continue
            try:
                values.append(bounded_json(line, request))
            except exceptions.ParseError as refused:
                raise exceptions.ParseError(
                    in_request_language(request, LINE_NOT_JSON, line=number, error=refused.detail)
                ) from refused
        return values
