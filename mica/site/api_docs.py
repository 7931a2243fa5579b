"""The API reference page, read from the same OpenAPI schema /api/schema/ serves."""

import json
import re
from functools import cache

from django.utils import translation
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import pgettext_lazy
from drf_spectacular.generators import SchemaGenerator

from mica.content.reads import reads_unrecorded

HTTP_METHODS = ("get", "post", "put", "patch", "delete")

# Where a parameter goes (OpenAPI's `in`), in the reader's words.
PARAMETER_PLACES = {
    "path": pgettext_lazy("API parameter place", "path"),
    "query": pgettext_lazy("API parameter place", "query"),
    "header": pgettext_lazy("API parameter place", "header"),
    "cookie": pgettext_lazy("API parameter place", "cookie"),
}
# How far the field tables follow nested objects (attempt > invocations > a field).
FIELD_DEPTH = 3
CHOICE_LIST = "\n\n* `"


@cache  # one entry per supported language
def _schema(language):
    # Summaries are translatable, so the schema is generated once per language. What it
    # reads to introspect the views is no input of the page that shows it.
    with translation.override(language), reads_unrecorded():
        return SchemaGenerator().get_schema(request=None, public=True)


def api_schema():
    return _schema(translation.get_language())


CODE_SPAN = re.compile(r"`([^`]+)`")


def with_code(text):
    """A description's `code spans` (CommonMark, as OpenAPI descriptions are) as <code>."""
    return mark_safe(CODE_SPAN.sub(r"<code>\1</code>", escape(text)))


def _resolved(schema, components):
    """`schema` with its $ref (or its single allOf $ref) read from the components."""
    if "allOf" in schema and len(schema["allOf"]) == 1:
        schema = {**_resolved(schema["allOf"][0], components), **schema}
        schema.pop("allOf")
    if "$ref" in schema:
        schema = {**components[schema["$ref"].rsplit("/", 1)[1]], **schema}
        schema.pop("$ref")
    return schema


def _type_of(schema, components):
    """A field's JSON type as code reads it: string, integer, string (date), invocation[]…"""
    schema = _resolved(schema, components)
    if schema.get("type") == "array":
        return f"{_type_of(schema.get('items', {}), components)}[]"
    if "enum" in schema:
        return " | ".join(str(v) for v in schema["enum"] if v is not None)
    kind = schema.get("type", "object")
    return f"{kind} ({schema['format']})" if "format" in schema else kind


def _without_choices(description):
    """drf-spectacular appends a field's choices as a Markdown list; the type says them."""
    return "" if description.startswith(CHOICE_LIST.strip()) else description.split(CHOICE_LIST)[0]


def body_fields(schema, components, prefix="", depth=0):
    """Every field of a request body, nested ones by their path (invocations[].order)."""
    schema = _resolved(schema, components)
    if schema.get("type") == "array":
        return body_fields(schema.get("items", {}), components, prefix, depth)
    required = set(schema.get("required", []))
    fields = []
    for name, field in schema.get("properties", {}).items():
        field = _resolved(field, components)
        if field.get("readOnly"):
            continue
        path = f"{prefix}{name}"
        fields.append(
            {
                "name": path,
                "type": _type_of(field, components),
                "required": name in required,
                "description": with_code(_without_choices(field.get("description", ""))),
            }
        )
        inner = _resolved(field.get("items", {}), components) if "items" in field else field
        if inner.get("properties") and depth + 1 < FIELD_DEPTH:
            suffix = "[]." if field.get("type") == "array" else "."
            fields += body_fields(inner, components, path + suffix, depth + 1)
    return fields


def _example_name(key, example):
    """A refusal is named by its rule (the schema's key is the rule, capitalised)."""
    value = example.get("value")
    rules = value.get("errors", {}).get("rule") if isinstance(value, dict) else None
    return rules[0] if rules else key


def _responses(op):
    answers = []
    for status, response in op.get("responses", {}).items():
        examples = response.get("content", {}).get("application/json", {}).get("examples", {})
        answers.append(
            {
                "status": status,
                "description": with_code(response.get("description", "")),
                "examples": [
                    {"name": _example_name(name, example), "summary": example.get("summary", "")}
                    for name, example in examples.items()
                ],
            }
        )
    return answers


def _operation(url, method, op, components):
    body = op.get("requestBody", {}).get("content", {})
    json_body = body.get("application/json", {})
    return {
        "method": method.upper(),
        "path": url,
        "summary": op.get("summary") or op.get("description", ""),
        "description": with_code(op.get("description", "")) if op.get("summary") else "",
        "parameters": [
            {
                "name": p["name"],
                "where": PARAMETER_PLACES.get(p["in"], p["in"]),
                "required": p.get("required", False),
                "description": p.get("description", ""),
            }
            for p in op.get("parameters", [])
        ],
        "media_types": list(body),
        "fields": body_fields(json_body["schema"], components) if json_body else [],
        "responses": _responses(op),
        "token": any("tokenAuth" in scheme for scheme in op.get("security", [])),
        "anchor": op.get("operationId", f"{method}-{url}"),
    }


def api_operations():
    schema = api_schema()
    components = schema.get("components", {}).get("schemas", {})
    return [
        _operation(url, method, item[method], components)
        for url, item in schema.get("paths", {}).items()
        for method in HTTP_METHODS
        if method in item
    ]


def token_scheme():
    """How the token scheme is described: the header, and how to get a token."""
    return api_schema().get("components", {}).get("securitySchemes", {}).get("tokenAuth", {})


def request_examples(path, method="post"):
    """{name: (summary, JSON text)} of an operation's request examples, for the console."""
    op = api_schema()["paths"][path][method]
    examples = op["requestBody"]["content"]["application/json"].get("examples", {})
    return {
        name: {"summary": example.get("summary", name), "body": json.dumps(example["value"])}
        for name, example in examples.items()
    }
