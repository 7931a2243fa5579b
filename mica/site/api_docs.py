"""The API reference page, read from the same OpenAPI schema /api/schema/ serves."""

from functools import cache

from django.utils import translation
from django.utils.translation import pgettext_lazy
from drf_spectacular.generators import SchemaGenerator

HTTP_METHODS = ("get", "post", "put", "patch", "delete")

# Where a parameter goes (OpenAPI's `in`), in the reader's words.
PARAMETER_PLACES = {
    "path": pgettext_lazy("API parameter place", "path"),
    "query": pgettext_lazy("API parameter place", "query"),
    "header": pgettext_lazy("API parameter place", "header"),
    "cookie": pgettext_lazy("API parameter place", "cookie"),
}


@cache  # one entry per supported language
def _schema(language):
    # Summaries are translatable, so the schema is generated once per language.
    with translation.override(language):
        return SchemaGenerator().get_schema(request=None, public=True)


def api_operations():
    operations = []
    for url, item in _schema(translation.get_language()).get("paths", {}).items():
        for method in HTTP_METHODS:
            if method not in item:
                continue
            op = item[method]
            operations.append(
                {
                    "method": method.upper(),
                    "path": url,
                    "summary": op.get("summary") or op.get("description", ""),
                    "parameters": [
                        {
                            "name": p["name"],
                            "where": PARAMETER_PLACES.get(p["in"], p["in"]),
                            "required": p.get("required", False),
                            "description": p.get("description", ""),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "anchor": op.get("operationId", f"{method}-{url}"),
                }
            )
    return operations
