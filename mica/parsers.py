"""The API's JSON parser: bounded depth and key length, no unstorable text.

The body's size is bounded before it is parsed, whatever its media type: a body that
declares or holds more than DATA_UPLOAD_MAX_MEMORY_SIZE bytes is refused (mica.api
answers 413) having read at most that many, never read whole first.
Registered in REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]; kept apart from mica.api,
which imports rest_framework.views (that module reads the settings naming this one).
"""

import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.utils import translation
from django.utils.http import parse_header_parameters
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.parsers import BaseParser, JSONParser, get_encoding
from rest_framework.utils import json

from mica.errors import ValidationFailed

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
UNKNOWN_CHARSET = _(
    "The request body's charset “%(charset)s” is not one the API knows: send UTF-8 "
    "(Content-Type: application/json; charset=utf-8)."
)
# Python keeps the last of two equal keys: a record that said two outcomes was stored as
# the second. Each key is said once, in every intake (the API, JSON Lines, the command).
DUPLICATE_KEY_RULE = "duplicate-key"
DUPLICATE_KEY = _("The key %(key)s appears twice in one JSON object: say each field once.")


def duplicate_key_refused(key):
    """The refusal of a key said twice, naming the rule and the key."""
    detail = str(DUPLICATE_KEY) % {"key": json.dumps(key, ensure_ascii=False)}
    raise ValidationFailed(
        detail, field_errors={"rule": [DUPLICATE_KEY_RULE], "key": [key], "detail": [detail]}
    )


def unique_keys(pairs):
    """A json.loads object_pairs_hook: the object, or the refusal of a repeated key."""
    seen = set()
    for key, _value in pairs:
        if key in seen:
            duplicate_key_refused(key)
        seen.add(key)
    return dict(pairs)


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
    """The body as text, read within the upload bound; bytes that are not in its encoding
    are refused with 400, a charset no codec reads with 415."""
    request = parser_context["request"]
    _media_type, params = parse_header_parameters(request.content_type or "")
    # Django reads a charset it does not know as UTF-8, silently: refused instead. Text
    # codecs only (''.encode refuses the others, such as bz2_codec, as DRF does).
    charset = params.get("charset")
    try:
        if charset is not None:
            "".encode(charset)
    except (LookupError, UnicodeError):
        raise exceptions.UnsupportedMediaType(
            request.content_type,
            detail=in_request_language(request, UNKNOWN_CHARSET, charset=charset[:100]),
        ) from None
    try:
        return body_read(stream, request).decode(get_encoding(parser_context))
    except UnicodeDecodeError as exc:
        raise exceptions.ParseError(f"JSON parse error - {exc}") from exc


def body_read(stream, request):
    """The body's bytes, refused (RequestDataTooBig, 413) once it is over the upload bound:
    a body declared larger is refused unread, and one that is not declared, or declared
    smaller than it is, is read no further than one byte past the bound."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if limit is None:
        return stream.read()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise RequestDataTooBig(TOO_LARGE)
    body = stream.read(limit + 1)
    if len(body) > limit:
        raise RequestDataTooBig(TOO_LARGE)
    return body


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
        if len({key for key, _value in pairs}) < len(pairs):
            with translation.override(translation.get_language_from_request(request)):
                unique_keys(pairs)  # refuses, naming the key said twice
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


def json_lines(text):
    """(number, line) of JSON Lines text: lines end at "\n" only (a "\r" before it is part
    of the ending), so U+2028, U+2029, a form feed or any other character Python's
    splitlines() would break at stays data inside its string, as JSON says it is."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


class BoundedJSONLinesParser(BaseParser):
    """JSON Lines (one JSON value a line, blank lines skipped) as a list, each line under
    the bounds of a JSON body: an operator's run file, sent as it is."""

    media_type = "application/jsonl"

    def parse(self, stream, media_type=None, parser_context=None):
        request = parser_context["request"]
        values = []
        for number, line in json_lines(decoded(stream, parser_context)):
            if not line.strip():
                continue
            try:
                values.append(bounded_json(line, request))
            except exceptions.ParseError as refused:
                raise exceptions.ParseError(
                    in_request_language(request, LINE_NOT_JSON, line=number, error=refused.detail)
                ) from refused
        return values
