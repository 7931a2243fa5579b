"""The public task catalogue described as Croissant 1.0 JSON-LD (MLCommons).

Pure: it builds a dict from plain data and reads nothing. The document points at the
catalogue files the export already wrote (their URLs and SHA-256 checksums), describes
the CSV file's columns as the fields of a `tasks` record set, and carries the few task
families inline as a `families` record set that the tasks' `family` field references.
"""

import re
from collections.abc import Iterable, Mapping

from mica.bilingual import LANGUAGES
from mica.exports.formats.catalogue import (
    CATALOGUE_COLUMNS,
    COLUMN_DESCRIPTIONS,
    INTEGER_COLUMNS,
    edition_record,
)

CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

# The Croissant 1.0 context as the specification's example datasets print it (mlcroissant
# warns about any other).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

# The project has not chosen a licence for its data yet; the pipeline passes its own
# through `license` once it has one.
DEFAULT_LICENSE = "https://creativecommons.org/licenses/by/4.0/"

CSV_FORMAT = "text/csv"

FAMILY_FIELDS = (
    ("id", "sc:Text", "The family's stable id."),
    ("position", "sc:Integer", "The family's order in the catalogue."),
    ("task_prefix", "sc:Text", "The prefix of the ids of the family's tasks."),
    ("label_en", "sc:Text", "The family's name in English."),
    ("label_ko", "sc:Text", "The family's name in Korean."),
    ("timeout_seconds", "sc:Integer", "How long one run of a task of the family may take."),
)

# The Croissant RAI properties the market editions' datasheets and data statements fill,
# each with the texts it carries: why the records exist and what they are for (use cases),
# what they hold and do not (limitations), whose language, region and channels they describe
# (biases: the conditions a result must be read against), who reviews, by role only
# (annotator demographics); and how they were written and are kept up to date.
RAI_LISTS = (
    ("rai:dataUseCases", ("datasheet", ("motivation", "intended_uses"))),
    ("rai:dataLimitations", ("datasheet", ("composition",))),
    (
        "rai:dataBiases",
        ("data_statement", ("language_variety", "region", "channel_and_register")),
    ),
    ("rai:annotatorDemographics", ("data_statement", ("reviewer_context",))),
)
# These two take one text each (mlcroissant: cardinality ONE): every market's text in both
# languages, one paragraph each.
RAI_TEXTS = (
    ("rai:dataCollection", ("datasheet", ("collection",))),
    ("rai:dataReleaseMaintenancePlan", ("datasheet", ("distribution", "maintenance"))),
)

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_EDITION_VERSION = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")


def croissant_document(
    *,
    tasks: Iterable[Mapping],
    families: Iterable[Mapping],
    edition,
    site_url: str,
    files: Iterable[Mapping],
    landing_url: str | None = None,
    license: str = DEFAULT_LICENSE,
    date_published=None,
    markets: Iterable[Mapping] = (),
) -> dict:
    """The Croissant JSON-LD document of one edition's public task catalogue.

    tasks: the catalogue rows, as `catalogue.catalogue_rows` yields them and the
        catalogue JSON holds them (dicts keyed by CATALOGUE_COLUMNS). They are read
        once, to count them and to check that every task's family is among `families`.
    families: the task families as `catalogue.family_rows` gives them (dicts with id,
        position, task_prefix, label_en, label_ko, timeout_seconds); written inline.
    edition: a `methodology.Edition` or the dict `catalogue.edition_record` makes of it.
    site_url: the portal's absolute base URL, e.g. "https://mica.example".
    files: the published catalogue files, each {"name", "url", "encoding_format",
        "sha256"} with an optional "size" in bytes and "description". Exactly one must
        be text/csv: the `tasks` record set reads its columns from that file.
    landing_url: the dataset's page; the site's base URL when not given.
    license: the URL of the data's licence.
    date_published: a date (or ISO string) for a draft edition, which has no publication
        date of its own yet (e.g. the day of the export); the edition's date wins.
    markets: the market editions as the markets export holds them (dicts with "code",
        "datasheet" and "data_statement", their texts as motivation_en, motivation_ko…);
        their texts fill the responsible-AI properties (RAI_LISTS, RAI_TEXTS), in English
        and Korean, each labelled with its market.

    Raises ValueError when the files or the families do not fit the rows.
    """
    edition = edition_record(edition)
    if not edition.get("published_on") and date_published:
        edition["published_on"] = edition_record({"published_on": date_published})["published_on"]
    site_url = site_url.rstrip("/")
    families = [dict(family) for family in families]
    family_ids = {family["id"] for family in families}
    task_count = 0
    for task in tasks:
        if task["family"] not in family_ids:
            raise ValueError(f"task {task['id']} names an unknown family {task['family']!r}")
        task_count += 1

    distribution = [_file_object(file) for file in files]
    csv_files = [f for f in distribution if f["encodingFormat"] == CSV_FORMAT]
    if len(csv_files) != 1:
        raise ValueError(f"expected exactly one {CSV_FORMAT} file, got {len(csv_files)}")

    label = edition.get("version_label_en") or edition["slug"]
    document = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"MICA public task catalogue, {label}",
        "description": (
            "The public tasks of MICA, the Multinational Index of Consumer Agents, at "
            f"edition {label}: {_count(task_count, 'task')} in "
            f"{_count(len(families), 'family', 'families')}, each at its "
            "current version, with its final state and confirmation boundary in English "
            "and Korean and the markets where it applies. Holdout tasks are not included."
        ),
        "license": license,
        "url": landing_url or f"{site_url}/",
        "inLanguage": list(LANGUAGES),
        "creator": {"@type": "sc:Organization", "name": "MICA", "url": f"{site_url}/"},
        "citeAs": _bibtex(edition, label, landing_url or f"{site_url}/"),
        "distribution": distribution,
        "recordSet": [
            _families_record_set(families),
            _tasks_record_set(csv_files[0]["@id"]),
        ],
    }
    document.update(_responsible_ai(list(markets)))
    version = _semantic_version(edition["slug"])
    if version:
        document["version"] = version
    if edition.get("published_on"):
        document["datePublished"] = edition["published_on"]
    return document


def _market_texts(markets, part, fields):
    """(language, "KR: text") for every market's `fields` of `part`, English then Korean."""
    return [
        (language, f"{market['code']}: {market[part][f'{field}_{language}']}")
        for language in LANGUAGES
        for market in markets
        if market.get(part)
        for field in fields
    ]


def _responsible_ai(markets):
    properties = {}
    for name, (part, fields) in RAI_LISTS:
        texts = _market_texts(markets, part, fields)
        if texts:
            properties[name] = [{"@language": lang, "@value": text} for lang, text in texts]
    for name, (part, fields) in RAI_TEXTS:
        texts = _market_texts(markets, part, fields)
        if texts:
            properties[name] = "\n\n".join(f"[{lang}] {text}" for lang, text in texts)
    return properties


def _file_object(file):
    sha256 = str(file["sha256"]).lower()
    if not _SHA256.match(sha256):
        raise ValueError(f"file {file['name']} has no hex SHA-256 checksum")
    node = {
        "@type": "cr:FileObject",
        "@id": file["name"],
        "name": file["name"],
        "contentUrl": file["url"],
        "encodingFormat": file["encoding_format"],
        "sha256": sha256,
    }
    if file.get("size") is not None:
        node["contentSize"] = f"{int(file['size'])} B"
    if file.get("description"):
        node["description"] = file["description"]
    return node


def _families_record_set(families):
    return {
        "@type": "cr:RecordSet",
        "@id": "families",
        "name": "families",
        "description": "The task families: the everyday domains the tasks are grouped in.",
        "key": {"@id": "families/id"},
        "field": [
            {
                "@type": "cr:Field",
                "@id": f"families/{name}",
                "name": name,
                "description": description,
                "dataType": data_type,
            }
            for name, data_type, description in FAMILY_FIELDS
        ],
        "data": [
            {f"families/{name}": family[name] for name, _type, _description in FAMILY_FIELDS}
            for family in families
        ],
    }


def _tasks_record_set(csv_file_id):
    fields = []
    for column in CATALOGUE_COLUMNS:
        field = {
            "@type": "cr:Field",
            "@id": f"tasks/{column}",
            "name": column,
            "description": COLUMN_DESCRIPTIONS[column],
            "dataType": "sc:Integer" if column in INTEGER_COLUMNS else "sc:Text",
            "source": {"fileObject": {"@id": csv_file_id}, "extract": {"column": column}},
        }
        if column == "family":
            field["references"] = {"field": {"@id": "families/id"}}
        fields.append(field)
    return {
        "@type": "cr:RecordSet",
        "@id": "tasks",
        "name": "tasks",
        "description": "One record per public task at its current version.",
        "key": {"@id": "tasks/id"},
        "field": fields,
    }


def _count(number, singular, plural=None):
    return f"{number} {singular if number == 1 else plural or singular + 's'}"


def _semantic_version(slug):
    """ "preview-0.1" -> "0.1.0-preview", "1.2" -> "1.2.0"; None when the slug has no number."""
    match = _EDITION_VERSION.search(slug)
    if not match:
        return None
    version = ".".join(part or "0" for part in match.groups())
    label = re.sub(r"[^0-9A-Za-z-]+", "-", slug[: match.start()]).strip("-")
    return f"{version}-{label}" if label else version


def _bibtex(edition, label, url):
    lines = [
        f"@misc{{mica-catalogue-{edition['slug']},",
        f"  title = {{{{MICA}} public task catalogue, {label}}},",
        "  author = {{MICA}},",
    ]
    if edition.get("published_on"):
        lines.append(f"  year = {{{edition['published_on'][:4]}}},")
    lines.append(f"  howpublished = {{\\url{{{url}}}}}")
    lines.append("}")
    return "\n".join(lines)
