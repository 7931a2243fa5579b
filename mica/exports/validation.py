"""JSON Schema checks of the export files, gathered so a refusal names every problem."""

import json
from functools import cache
from pathlib import Path

from django.utils.translation import gettext as _
from jsonschema import Draft7Validator, Draft202012Validator, FormatChecker

from mica.errors import DomainError


class ExportRefused(DomainError):
    """The export set failed a check; the published set is untouched."""


SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
MAX_REPORTED = 20


@cache
def validator(schema_name):
    schema = json.loads((SCHEMA_DIR / schema_name).read_text(encoding="utf-8"))
    validator_class = Draft202012Validator
    if "$schema" in schema and "draft-07" in schema["$schema"]:
        validator_class = Draft7Validator
    return validator_class(schema, format_checker=FormatChecker())


class SchemaCheck:
    def __init__(self):
        self.problems = []

    def _record(self, schema_name, instance, where):
        for error in validator(schema_name).iter_errors(instance):
            if len(self.problems) < MAX_REPORTED:
                path = "/".join(str(p) for p in error.absolute_path)
                self.problems.append(f"{where} {path}: {error.message}")

    def row(self, schema_name, row):
        self._record(schema_name, row, f"task {row.get('id', '?')}")

    def document(self, schema_name, document, file_name):
        self._record(schema_name, document, file_name)

    def raise_if_invalid(self):
        if self.problems:
            raise ExportRefused(
                _("The export set failed its schema checks: %(problems)s")
                % {"problems": "; ".join(self.problems)}
            )
