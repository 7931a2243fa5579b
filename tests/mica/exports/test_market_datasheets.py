"""Datasheets and data statements in the markets export and in the Croissant file's
responsible-AI properties, in English and Korean."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from markets.models import DataStatement
from mica.exports.publish import exports_build_and_publish
from mica.exports.validation import ExportRefused
from tests.mica.exports.conftest import published

pytestmark = pytest.mark.django_db

SCHEMA = json.loads(
    (
        Path(__file__).resolve().parents[3] / "mica" / "exports" / "schemas" / "markets.schema.json"
    ).read_text()
)


@pytest.mark.vendor
def test_the_markets_export_carries_them_and_its_schema_requires_both_languages(
    canonical_content, export_dir, client
):
    exports_build_and_publish(job_run_id=None)
    document = json.loads(published(export_dir)["mica-markets.json"])
    Draft202012Validator(SCHEMA).validate(document)
    kr = next(m for m in document["markets"] if m["code"] == "KR")
    api = client.get("/api/v1/markets/kr/").json()
    assert kr["datasheet"] == api["datasheet"]
    assert kr["data_statement"] == api["data_statement"]
    assert all(m["datasheet"] and m["data_statement"] for m in document["markets"])

    # A data statement without its Korean text fails the schema, and nothing is published.
    before = published(export_dir)
    DataStatement.objects.filter(market_edition__market__code="JP").update(region_ko="")
    with pytest.raises(ExportRefused) as refused:
        exports_build_and_publish(job_run_id=None)
    assert "mica-markets.json" in refused.value.message
    assert published(export_dir) == before


@pytest.mark.vendor
def test_the_croissant_file_carries_them_as_responsible_ai_properties(
    canonical_content, export_dir, client
):
    """Croissant RAI (mlcommons.org/croissant/RAI): the datasheets and data statements fill
    the dataset's responsible-AI properties, in both languages, each text naming its
    market; mlcroissant reads them without an error or a warning."""
    import mlcroissant

    exports_build_and_publish(job_run_id=None)
    current = (Path(export_dir) / "current").resolve()
    document = json.loads((current / "mica-catalogue.croissant.json").read_text())
    names = ["mica-catalogue.json", "mica-catalogue.csv"]
    dataset = mlcroissant.Dataset(
        jsonld=current / "mica-catalogue.croissant.json",
        mapping={name: str(current / name) for name in names},
    )
    assert not dataset.metadata.ctx.issues.errors
    # A draft edition has no datePublished yet (mlcroissant recommends one); nothing else.
    assert all("datePublished" in w for w in dataset.metadata.ctx.issues.warnings)
    kr = client.get("/api/v1/markets/kr/").json()
    metadata = dataset.metadata
    for language in ("en", "ko"):
        sheet, statement = kr["datasheet"], kr["data_statement"]
        assert f"KR: {sheet[f'intended_uses_{language}']}" in metadata.data_use_cases
        assert f"KR: {sheet[f'composition_{language}']}" in metadata.data_limitations
        assert f"KR: {statement[f'region_{language}']}" in metadata.data_biases
        assert f"KR: {statement[f'reviewer_context_{language}']}" in (
            metadata.annotator_demographics
        )
        assert f"[{language}] KR: {sheet[f'collection_{language}']}" in metadata.data_collection
        assert sheet[f"maintenance_{language}"] in metadata.data_release_maintenance_plan
    tagged = {value["@language"] for value in document["rai:dataUseCases"]}
    assert tagged == {"en", "ko"}
    # Six markets, two texts each, in two languages.
    assert len(document["rai:dataUseCases"]) == 6 * 2 * 2
