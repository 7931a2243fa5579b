"""Every file of the export set: its name, what it holds, its media type and how it is written.

The order is the writing order: a later file may describe earlier ones (the
Croissant document carries the catalogue files' checksums, the project state
lists the whole set).
"""

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from catalogue.selectors import family_list, task_public_list
from mica.exports import documents
from mica.exports.attempts import attempts_document
from mica.exports.formats import atom, catalogue, croissant, csl
from mica.methodology.exports import methodology_pack
from mica.methodology.models import Reference


@dataclass
class BuildContext:
    """What the writers share during one build: the edition and the files written so far."""

    edition: object
    site_url: str
    written: dict  # name -> {"sha256", "size", ...}, filled in by the builder
    validate_row: Callable = lambda schema, row: None


@dataclass(frozen=True)
class ExportFile:
    name: str
    title: str
    media_type: str
    write: Callable  # (fh, context) -> None
    schema: str | None = None  # a schema under schemas/ that the whole file must meet


def _json(fh, document):
    json.dump(document, fh, ensure_ascii=False, indent=1)
    fh.write("\n")


def download_url(context, name):
    return f"{context.site_url}/downloads/{name}"


def _pack(language):
    def write(fh, context):
        fh.write(methodology_pack(context.edition, language))

    return write


def _validated_rows(context):
    for row in catalogue.catalogue_rows(task_public_list()):
        context.validate_row("catalogue-task.schema.json", row)
        yield row


def _catalogue_json(fh, context):
    families = catalogue.family_rows(family_list())
    catalogue.write_catalogue_json(
        fh, _validated_rows(context), edition=context.edition, families=families
    )


def _catalogue_csv(fh, context):
    catalogue.write_catalogue_csv(fh, _validated_rows(context))


def _croissant(fh, context):
    files = [
        {
            "name": name,
            "url": download_url(context, name),
            "encoding_format": media_type,
            "sha256": context.written[name]["sha256"],
        }
        for name, media_type in [
            (CATALOGUE_JSON, "application/json"),
            (CATALOGUE_CSV, "text/csv"),
        ]
    ]
    _json(
        fh,
        croissant.croissant_document(
            tasks=catalogue.catalogue_rows(task_public_list()),
            families=catalogue.family_rows(family_list()),
            edition=context.edition,
            site_url=context.site_url,
            files=files,
            markets=documents.markets_document(context.edition)["markets"],
        ),
    )


def _references(fh, context):
    references = Reference.objects.filter(edition=context.edition).order_by("position", "pk")
    _json(fh, csl.csl_items(references))


def _gate_csv(fh, context):
    writer = csv.DictWriter(fh, fieldnames=documents.GATE_CSV_COLUMNS)
    writer.writeheader()
    for row in documents.gate_csv_rows():
        # An absent figure stays an empty field: absence is never a zero.
        writer.writerow({k: "" if v is None else v for k, v in row.items()})


def _corrections_atom(fh, context):
    document = documents.corrections_document(context.edition)
    atom.write_atom(
        fh,
        feed_id=download_url(context, CORRECTIONS_ATOM),
        title="MICA corrections and challenge decisions / 정정과 이의 제기 결정",
        updated=documents.latest_decision_time(document),
        site_url=context.site_url,
        self_url=download_url(context, CORRECTIONS_ATOM),
        entries=documents.atom_entries(document, context.site_url),
    )


def _project_state(fh, context):
    files = [
        {"name": f.name, "media_type": f.media_type, "url": download_url(context, f.name)}
        for f in EXPORT_FILES
    ]
    _json(fh, documents.project_state_document(context.edition, files))


CATALOGUE_JSON = "mica-catalogue.json"
CATALOGUE_CSV = "mica-catalogue.csv"
CORRECTIONS_JSON = "mica-corrections.json"
CORRECTIONS_ATOM = "mica-corrections.atom"
ATTEMPTS_JSON = "mica-attempts.json"

EXPORT_FILES = [
    ExportFile(
        "mica-methodology.en.md", _("Methodology pack, English"), "text/markdown", _pack("en")
    ),
    ExportFile(
        "mica-methodology.ko.md", _("Methodology pack, Korean"), "text/markdown", _pack("ko")
    ),
    ExportFile(
        CATALOGUE_JSON, _("Public task catalogue (JSON)"), "application/json", _catalogue_json
    ),
    ExportFile(CATALOGUE_CSV, _("Public task catalogue (CSV)"), "text/csv", _catalogue_csv),
    ExportFile(
        "mica-catalogue.croissant.json",
        _("Public task catalogue (Croissant JSON-LD)"),
        "application/ld+json",
        _croissant,
    ),
    ExportFile(
        "mica-markets.json",
        _("Market editions"),
        "application/json",
        lambda fh, c: _json(fh, documents.markets_document(c.edition)),
        "markets.schema.json",
    ),
    ExportFile(
        "mica-references.csl.json",
        _("References (CSL-JSON)"),
        "application/vnd.citationstyles.csl+json",
        _references,
        "csl-data.json",
    ),
    ExportFile(
        "mica-gate.json",
        _("Publication gate results (JSON)"),
        "application/json",
        lambda fh, c: _json(fh, documents.gate_document(c.edition)),
        "gate.schema.json",
    ),
    ExportFile("mica-gate.csv", _("Publication gate cells (CSV)"), "text/csv", _gate_csv),
    ExportFile(
        ATTEMPTS_JSON,
        _("Attempts behind each gate cell, redacted (JSON)"),
        "application/json",
        lambda fh, c: _json(fh, attempts_document(c.edition)),
        "attempts.schema.json",
    ),
    ExportFile(
        CORRECTIONS_JSON,
        _("Corrections, withdrawals and challenge decisions (JSON)"),
        "application/json",
        lambda fh, c: _json(fh, documents.corrections_document(c.edition)),
        "corrections.schema.json",
    ),
    ExportFile(
        CORRECTIONS_ATOM,
        _("Corrections and challenge decisions (Atom feed)"),
        "application/atom+xml",
        _corrections_atom,
    ),
    ExportFile(
        "mica-project-state.json",
        _("Project state with the live figures"),
        "application/json",
        _project_state,
        "project-state.schema.json",
    ),
]

MANIFEST = "manifest.json"


def site_url():
    return settings.SITE_URL
