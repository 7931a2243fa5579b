"""The export formats: catalogue rows, CSV and JSON, Croissant, CSL-JSON and Atom.

Each format is checked by reading it back with an independent reader: the csv and json
modules, mlcroissant, the official CSL-JSON schema, and xml.etree.
"""

import csv
import datetime
import hashlib
import io
import json
import math
import xml.etree.ElementTree as ET

import jsonschema
import mlcroissant
import pytest

from catalogue.models import TaskDefinition, TaskSet, TaskVersion
from catalogue.selectors import family_list, task_public_list
from mica.exports.formats.atom import ATOM_NS, atom_date, write_atom
from mica.exports.formats.catalogue import (
    CATALOGUE_COLUMNS,
    HoldoutLeak,
    catalogue_rows,
    edition_record,
    family_rows,
    write_catalogue_csv,
    write_catalogue_json,
)
from mica.exports.formats.croissant import CONFORMS_TO, croissant_document
from mica.exports.formats.csl import SCHEMA_PATH, csl_items
from mica.methodology.selectors import edition_current, reference_list

SITE = "https://mica.example"
A = f"{{{ATOM_NS}}}"


class RecordingFile(io.StringIO):
    """A text file that counts its writes, to see that writers stream."""

    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, text):
        self.writes += 1
        return super().write(text)


@pytest.fixture
def holdout_task(canonical_content):
    public = TaskDefinition.objects.select_related("current_version").first()
    definition = TaskDefinition.objects.create(
        slug="ec-export-holdout-item",
        family=public.family,
        position=98,
        task_set=TaskSet.HOLDOUT,
    )
    version = TaskVersion.objects.create(
        definition=definition,
        version="1.0.0",
        title_en="Holdout",
        title_ko="홀드아웃",
        final_state_en="x",
        final_state_ko="x",
        confirmation_boundary_en="x",
        confirmation_boundary_ko="x",
    )
    definition.current_version = version
    definition.save(update_fields=["current_version"])
    return definition


# The catalogue rows and files ------------------------------------------------------


def test_rows_are_the_public_tasks_at_their_current_versions(canonical_content):
    public = list(task_public_list())
    rows = list(catalogue_rows(task_public_list()))

    assert [row["id"] for row in rows] == [task.slug for task in public]
    assert all(list(row) == list(CATALOGUE_COLUMNS) for row in rows)
    first, task = rows[0], public[0]
    version = task.current_version
    assert first["version"] == version.version
    assert first["family"] == task.family.slug
    assert first["title_ko"] == version.title_ko and first["title_ko"]
    assert first["final_state_en"] == version.final_state_en
    assert first["confirmation_boundary_ko"] == version.confirmation_boundary_ko
    applicable = [
        a.market.code
        for a in version.applicability.order_by("market__display_order")
        if a.status != "not-applicable"
    ]
    assert first["markets"] == applicable


def test_rows_leave_the_holdout_out_and_refuse_one_passed_in(holdout_task):
    ids = {row["id"] for row in catalogue_rows(task_public_list())}
    assert holdout_task.slug not in ids

    with pytest.raises(HoldoutLeak):
        list(catalogue_rows(TaskDefinition.objects.all()))


def test_rows_cost_a_few_queries_per_chunk_not_per_task(
    canonical_content, django_assert_max_num_queries
):
    count = task_public_list().count()
    with django_assert_max_num_queries(3):
        assert len(list(catalogue_rows(task_public_list(), chunk_size=count))) == count
    with django_assert_max_num_queries(3 * math.ceil(count / 25)):
        assert len(list(catalogue_rows(task_public_list(), chunk_size=25))) == count


def test_csv_and_json_hold_every_row_and_are_written_row_by_row(canonical_content):
    rows = list(catalogue_rows(task_public_list()))
    edition = edition_current()

    csv_file = RecordingFile()
    assert write_catalogue_csv(csv_file, rows) == len(rows)
    json_file = RecordingFile()
    families = family_rows(family_list())
    assert write_catalogue_json(json_file, rows, edition=edition, families=families) == len(rows)

    assert csv_file.writes > len(rows) and json_file.writes > len(rows)
    read = list(csv.DictReader(io.StringIO(csv_file.getvalue(), newline="")))
    assert [r["id"] for r in read] == [r["id"] for r in rows]
    assert read[0]["title_ko"] == rows[0]["title_ko"]
    assert read[0]["markets"] == ";".join(rows[0]["markets"])
    assert read[0]["final_state_en"] == rows[0]["final_state_en"]

    document = json.loads(json_file.getvalue())
    assert document["tasks"] == rows
    assert document["columns"] == list(CATALOGUE_COLUMNS)
    assert document["families"] == families
    assert document["edition"]["slug"] == edition.slug
    assert "\\u" not in json_file.getvalue(), "Korean is written as text, not as escapes"


def test_json_of_no_rows_is_still_a_document():
    out = io.StringIO()
    assert write_catalogue_json(out, [], edition={"slug": "x"}) == 0
    assert json.loads(out.getvalue())["tasks"] == []


def test_csv_quotes_what_needs_quoting():
    row = {name: "" for name in CATALOGUE_COLUMNS}
    row.update(id="t-1", position=1, markets=[], final_state_en='a, "b"\nc & <d>')
    out = io.StringIO(newline="")
    write_catalogue_csv(out, [row])
    (read,) = csv.DictReader(io.StringIO(out.getvalue(), newline=""))
    assert read["final_state_en"] == 'a, "b"\nc & <d>'


# Croissant --------------------------------------------------------------------------


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _publish_catalogue(directory):
    """Write the catalogue files as the pipeline would and describe them in Croissant."""
    edition = edition_current()
    rows = list(catalogue_rows(task_public_list()))
    families = family_rows(family_list())
    csv_path, json_path = directory / "tasks.csv", directory / "tasks.json"
    with csv_path.open("w", newline="", encoding="utf-8") as fh:
        write_catalogue_csv(fh, rows)
    with json_path.open("w", encoding="utf-8") as fh:
        write_catalogue_json(fh, rows, edition=edition, families=families)
    files = [
        {
            "name": path.name,
            "url": f"{SITE}/downloads/{edition.slug}/{path.name}",
            "encoding_format": fmt,
            "sha256": _sha256(path),
            "size": path.stat().st_size,
        }
        for path, fmt in ((json_path, "application/json"), (csv_path, "text/csv"))
    ]
    document = croissant_document(
        tasks=rows,
        families=families,
        edition=edition,
        site_url=SITE,
        files=files,
        date_published=datetime.date(2026, 8, 8),
    )
    croissant_path = directory / "croissant.json"
    croissant_path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    mapping = {"tasks.csv": str(csv_path), "tasks.json": str(json_path)}
    return rows, families, document, croissant_path, mapping


def test_croissant_loads_in_mlcroissant_and_yields_every_task(canonical_content, tmp_path):
    rows, families, document, path, mapping = _publish_catalogue(tmp_path)

    dataset = mlcroissant.Dataset(jsonld=path, mapping=mapping)

    assert not dataset.metadata.ctx.issues.errors
    assert not dataset.metadata.ctx.issues.warnings
    assert document["conformsTo"] == CONFORMS_TO
    records = list(dataset.records("tasks"))
    assert [r["tasks/id"].decode() for r in records] == [row["id"] for row in rows]
    assert records[0]["tasks/title_ko"].decode() == rows[0]["title_ko"]
    assert records[0]["tasks/position"] == rows[0]["position"]
    family_ids = [r["families/id"] for r in dataset.records("families")]
    assert family_ids == [family["id"] for family in families]


def test_croissant_describes_the_dataset_and_its_files(canonical_content, tmp_path):
    rows, families, document, _path, _mapping = _publish_catalogue(tmp_path)

    assert document["@type"] == "sc:Dataset"
    for key in ("name", "description", "license", "url", "citeAs", "creator", "version"):
        assert document[key], key
    assert str(len(rows)) in document["description"]
    formats = {f["encodingFormat"]: f for f in document["distribution"]}
    assert set(formats) == {"text/csv", "application/json"}
    assert formats["text/csv"]["contentUrl"].startswith(f"{SITE}/downloads/")
    assert formats["text/csv"]["sha256"] == _sha256(tmp_path / "tasks.csv")
    tasks = next(rs for rs in document["recordSet"] if rs["@id"] == "tasks")
    assert [f["source"]["extract"]["column"] for f in tasks["field"]] == list(CATALOGUE_COLUMNS)


def test_mlcroissant_rejects_a_file_that_does_not_match_its_checksum(canonical_content, tmp_path):
    _rows, _families, _document, path, mapping = _publish_catalogue(tmp_path)
    with (tmp_path / "tasks.csv").open("a", encoding="utf-8") as fh:
        fh.write("tampered\n")

    dataset = mlcroissant.Dataset(jsonld=path, mapping=mapping)
    with pytest.raises(Exception) as raised:
        list(dataset.records("tasks"))
    causes, error = [], raised.value
    while error is not None:
        causes.append(str(error))
        error = error.__cause__ or error.__context__
    assert any("Hash of downloaded file" in cause for cause in causes), causes


def test_croissant_refuses_files_and_rows_that_do_not_fit():
    edition = {"slug": "preview-0.1", "version_label_en": "Preview 0.1"}
    family = {"id": "f", "position": 1, "task_prefix": "F", "label_en": "F", "label_ko": "F"}
    family["timeout_seconds"] = 900
    json_file = {"name": "t.json", "url": f"{SITE}/t.json", "encoding_format": "application/json"}
    json_file["sha256"] = "0" * 64
    with pytest.raises(ValueError, match="text/csv"):
        croissant_document(
            tasks=[], families=[family], edition=edition, site_url=SITE, files=[json_file]
        )
    csv_file = {**json_file, "name": "t.csv", "encoding_format": "text/csv", "sha256": "nope"}
    with pytest.raises(ValueError, match="SHA-256"):
        croissant_document(
            tasks=[], families=[family], edition=edition, site_url=SITE, files=[csv_file]
        )
    csv_file["sha256"] = "a" * 64
    with pytest.raises(ValueError, match="unknown family"):
        croissant_document(
            tasks=[{"id": "t-1", "family": "other"}],
            families=[family],
            edition=edition,
            site_url=SITE,
            files=[csv_file],
        )


def test_edition_versions_follow_semver_and_dates_are_iso():
    document = croissant_document(
        tasks=[],
        families=[],
        edition={"slug": "preview-0.1", "published_on": datetime.date(2026, 8, 1)},
        site_url=SITE,
        files=[
            {"name": "t.csv", "url": f"{SITE}/t.csv", "encoding_format": "text/csv"}
            | {"sha256": "a" * 64}
        ],
    )
    assert document["version"] == "0.1.0-preview"
    assert document["datePublished"] == "2026-08-01"
    assert "year = {2026}" in document["citeAs"]
    assert edition_record({"slug": "2", "published_on": None})["published_on"] is None


# CSL-JSON ---------------------------------------------------------------------------


@pytest.fixture
def csl(canonical_content):
    references = list(reference_list(edition_current()))
    return references, {item["id"]: item for item in csl_items(references)}


def test_every_reference_is_a_valid_csl_json_item(csl):
    references, items = csl
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(schema)

    jsonschema.validate(list(items.values()), schema)
    assert list(items) == [r.key for r in references]
    assert len(items) == 56
    assert all(item["title"] and item["URL"] for item in items.values())


def test_csl_types_and_fields_come_from_what_the_record_knows(csl):
    _references, items = csl

    webarena = items["webarena"]
    assert webarena["type"] == "paper-conference"
    assert (
        webarena["container-title"]
        == "The Twelfth International Conference on Learning Representations"
    )
    assert webarena["issued"] == {"date-parts": [[2024]]}
    assert webarena["title"].startswith("WebArena: ")
    assert webarena["title-short"] == "WebArena"
    assert webarena["author"][0] == {"family": "Zhou", "given": "Shuyan"}
    assert len(webarena["author"]) == 12

    assert items["mlperf-inference"]["title"] == "MLPerf Inference Benchmark"
    assert items["androidworld"]["issued"] == {"date-parts": [[2025]]}
    assert items["helm"]["type"] == "article-journal"
    assert items["helm"]["title"] == "Holistic Evaluation of Language Models"
    assert items["assistantbench"]["type"] == "article"
    assert items["assistantbench"]["publisher"] == "arXiv"
    nist = items["nist-ai-rmf"]
    assert nist["type"] == "report"
    assert nist["author"] == [{"literal": "National Institute of Standards and Technology"}]
    assert nist["number"] == "NIST AI 100-1"
    assert nist["issued"] == {"date-parts": [[2023, 1]]}
    assert nist["DOI"] == "10.6028/NIST.AI.100-1"

    keeney = items["keeney-raiffa"]
    assert keeney["type"] == "book"
    assert keeney["author"] == [
        {"family": "Keeney", "given": "Ralph L."},
        {"family": "Raiffa", "given": "Howard"},
    ]
    assert keeney["title"].startswith("Decisions with Multiple Objectives")
    assert keeney["publisher"] == "Cambridge University Press"

    fleming = items["fleming-wallace"]
    assert (fleming["container-title"], fleming["volume"], fleming["issue"]) == (
        "Communications of the ACM",
        "29",
        "3",
    )

    gpt3 = items["gpt3-contamination"]
    assert len(gpt3["author"]) == 31
    assert gpt3["title"] == "Language Models are Few-Shot Learners"

    kakao = items["kakao-app"]
    assert kakao["type"] == "webpage"
    assert kakao["title"] == "App"
    assert kakao["container-title"] == "Kakao Developers"
    assert kakao["author"] == [{"literal": "Kakao Corp."}]
    assert kakao["accessed"] == {"date-parts": [[2026, 8, 8]]}
    assert "issued" not in kakao, "the page names no date; none is invented"

    assert items["wcag-22"]["type"] == "webpage"
    assert items["wcag-22"]["title"] == "Web Content Accessibility Guidelines (WCAG) 2.2"
    assert items["wcag-22"]["issued"] == {"date-parts": [[2023, 10, 5]]}


def test_csl_reads_plain_mappings_and_the_access_date_field():
    (item,) = csl_items(
        [
            {
                "key": "x",
                "title_en": "Smith & Jones",
                "title_ko": "스미스 & 존스",
                "url": "https://doi.org/10.1/abc",
                "venue_en": "TACL 2018",
                "accessed_on": datetime.date(2026, 1, 2),
            }
        ]
    )
    assert item["type"] == "article-journal"
    assert item["author"] == [{"family": "Smith"}, {"family": "Jones"}]
    assert item["title"] == "Smith & Jones", "no subtitle: the label is the only title"
    assert item["translated-title"] == "스미스 & 존스"
    assert item["accessed"] == {"date-parts": [[2026, 1, 2]]}
    assert item["DOI"] == "10.1/abc"


# Atom -------------------------------------------------------------------------------


def _feed(fh, entries, **kwargs):
    return write_atom(
        fh,
        feed_id=f"{SITE}/feeds/corrections.atom",
        title="MICA corrections & decisions",
        updated=datetime.datetime(2026, 8, 8, 12, 30, tzinfo=datetime.UTC),
        site_url=f"{SITE}/corrections/",
        entries=entries,
        **kwargs,
    )


ENTRIES = [
    {
        "id": "tag:mica.example,2026:correction-1",
        "title": "Fix <b> & \"quotes\" in 'claims'",
        "updated": datetime.datetime(2026, 8, 7, 9, 0, tzinfo=datetime.UTC),
        "link": f"{SITE}/corrections/1/?a=1&b=2",
        "summary": "x < y && y > z",
        "content": "Longer text]]> with a CDATA end",
    },
    {
        "id": "tag:mica.example,2026:correction-1-ko",
        "title": "정정: 최종 상태 <확인>",
        "updated": datetime.date(2026, 8, 6),
        "summary": "한국어 요약\x0b제어 문자",
        "lang": "ko",
    },
]


def test_atom_feed_parses_back_with_every_required_element():
    out = io.BytesIO()
    assert _feed(out, ENTRIES, self_url=f"{SITE}/feeds/corrections.atom") == 2

    root = ET.fromstring(out.getvalue())
    assert root.tag == f"{A}feed"
    assert root.find(f"{A}id").text == f"{SITE}/feeds/corrections.atom"
    assert root.find(f"{A}title").text == "MICA corrections & decisions"
    assert root.find(f"{A}updated").text == "2026-08-08T12:30:00Z"
    assert root.find(f"{A}author/{A}name").text == "MICA"
    links = {link.get("rel"): link.get("href") for link in root.findall(f"{A}link")}
    assert links == {
        "alternate": f"{SITE}/corrections/",
        "self": f"{SITE}/feeds/corrections.atom",
    }
    entries = root.findall(f"{A}entry")
    assert len(entries) == 2
    for entry in entries:
        for name in ("id", "title", "updated"):
            assert entry.find(f"{A}{name}").text, name


def test_atom_escapes_markup_and_keeps_korean():
    out = io.BytesIO()
    _feed(out, ENTRIES)
    raw = out.getvalue()

    assert raw.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    assert b"<b>" not in raw and b"&lt;b&gt; &amp;" in raw
    assert "정정".encode() in raw, "Korean is written as UTF-8, not as character references"
    first, second = ET.fromstring(raw).findall(f"{A}entry")
    assert first.find(f"{A}title").text == "Fix <b> & \"quotes\" in 'claims'"
    assert first.find(f"{A}link").get("href") == f"{SITE}/corrections/1/?a=1&b=2"
    assert first.find(f"{A}summary").text == "x < y && y > z"
    assert first.find(f"{A}content").text == "Longer text]]> with a CDATA end"
    assert second.get("{http://www.w3.org/XML/1998/namespace}lang") == "ko"
    assert second.find(f"{A}title").text == "정정: 최종 상태 <확인>"
    assert second.find(f"{A}updated").text == "2026-08-06T00:00:00Z"
    assert second.find(f"{A}summary").text == "한국어 요약제어 문자"


def test_atom_streams_into_a_text_file_too():
    out = RecordingFile()
    _feed(out, (entry for entry in ENTRIES), lang="en")
    root = ET.fromstring(out.getvalue().encode("utf-8"))
    assert root.get("{http://www.w3.org/XML/1998/namespace}lang") == "en"
    assert len(root.findall(f"{A}entry")) == 2
    assert out.writes > 20


def test_atom_dates_are_utc_rfc3339():
    seoul = datetime.timezone(datetime.timedelta(hours=9))
    assert atom_date(datetime.datetime(2026, 8, 8, 9, 0, tzinfo=seoul)) == "2026-08-08T00:00:00Z"
    assert atom_date(datetime.datetime(2026, 8, 8, 9, 0)) == "2026-08-08T09:00:00Z"
    with pytest.raises(TypeError):
        atom_date(1234)
