"""The export set: written from the records, checked, published in one step, served."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from jsonschema import Draft202012Validator

from catalogue.models import TaskSet
from catalogue.synthetic import synthetic_catalogue_create
from mica.exports.publish import exports_build_and_publish
from mica.exports.registry import EXPORT_FILES
from mica.exports.validation import ExportRefused
from mica.methodology.exports import methodology_pack
from mica.methodology.models import ChapterItem
from mica.methodology.selectors import edition_current
from tests.mica.exports.conftest import assert_intact, published

pytestmark = pytest.mark.django_db

SCHEMAS = Path(__file__).resolve().parents[3] / "mica" / "exports" / "schemas"
SEED_000 = next((Path(__file__).resolve().parents[2] / "fixtures" / "seeds").glob("000_*.txt"))


@pytest.mark.vendor
def test_a_regeneration_publishes_every_file_with_its_manifest(canonical_content, export_dir):
    manifest = exports_build_and_publish(job_run_id=None)
    files = published(export_dir)
    assert assert_intact(files) == json.loads(files["manifest.json"]) == manifest
    assert [f["name"] for f in manifest["files"]] == [e.name for e in EXPORT_FILES]
    assert files["mica-methodology.en.md"] == SEED_000.read_bytes()
    korean = files["mica-methodology.ko.md"].decode()
    assert korean == methodology_pack(edition_current(), "ko") and korean.startswith(
        "# MICA 방법론"
    )
    catalogue = json.loads(files["mica-catalogue.json"])
    assert len(catalogue["tasks"]) == 100
    assert files["mica-catalogue.csv"].decode().count("\n") == 101
    for export in EXPORT_FILES:
        if export.schema:
            schema = json.loads((SCHEMAS / export.schema).read_text())
            Draft202012Validator(schema).validate(json.loads(files[export.name]))


@pytest.mark.vendor
def test_two_runs_over_the_same_records_fingerprint_the_same_inputs(canonical_content, export_dir):
    first = exports_build_and_publish(job_run_id=None)
    second = exports_build_and_publish(job_run_id=None)
    assert first["inputs_sha256"] == second["inputs_sha256"]
    claim = ChapterItem.objects.filter(item_type="claim").first()
    claim.detail_en += " Amended."
    claim.save()
    assert exports_build_and_publish(job_run_id=None)["inputs_sha256"] != first["inputs_sha256"]


@pytest.mark.vendor
def test_a_holdout_canary_in_the_input_refuses_publication(canonical_content, export_dir):
    before = exports_build_and_publish(job_run_id=None)
    before_files = published(export_dir)
    [canary] = synthetic_catalogue_create(1, task_set=TaskSet.HOLDOUT, prefix="canary")
    # The holdout id slips into public text: the public queryset cannot catch this, the scan must.
    claim = ChapterItem.objects.filter(item_type="claim").first()
    claim.detail_en += f" See {canary}."
    claim.save()
    with pytest.raises(ExportRefused) as refused:
        exports_build_and_publish(job_run_id=None)
    assert "mica-methodology.en.md" in refused.value.message
    assert published(export_dir) == before_files
    assert assert_intact(published(export_dir)) == before
    assert len(list((Path(export_dir) / "builds").iterdir())) == 1  # the refused build is gone


def test_holdout_text_in_korean_and_escaped_json_is_found_too(canonical_content, export_dir):
    synthetic_catalogue_create(1, task_set=TaskSet.HOLDOUT, prefix="hidden")
    claim = ChapterItem.objects.filter(item_type="claim").first()
    # The Korean final state of the holdout task, copied into public Korean text.
    claim.detail_ko += " 합성 기록 1에 요청한 변경이 반영되어 있습니다."
    claim.save()
    with pytest.raises(ExportRefused):
        exports_build_and_publish(job_run_id=None)
    assert published(export_dir) == {}


@pytest.mark.vendor
def test_a_correction_without_korean_fails_the_schema_and_publishes_nothing(
    canonical_content, export_dir
):
    from django.utils import timezone

    from governance.models import Correction
    from mica.methodology.models import Edition

    exports_build_and_publish(job_run_id=None)
    before = published(export_dir)
    Correction.objects.create(
        edition=Edition.objects.get(),
        section_id="why-mica-1",
        text_en="A fix.",
        text_ko="",
        decided_on=timezone.localdate(),
    )
    with pytest.raises(ExportRefused) as refused:
        exports_build_and_publish(job_run_id=None)
    assert "mica-corrections.json" in refused.value.message
    assert published(export_dir) == before


@pytest.mark.vendor
def test_the_command_runs_inline_or_queues_a_tracked_job(
    canonical_content, export_dir, django_capture_on_commit_callbacks, eager_celery
):
    from io import StringIO

    from mica.jobs.models import JobRun

    out = StringIO()
    call_command("regenerate_exports", "--sync", stdout=out)
    assert "[100%] Published" in out.getvalue() and "mica-catalogue.json" in out.getvalue()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("regenerate_exports", "--full", stdout=out)
    run = JobRun.objects.get(job_name="mica.exports.tasks.exports_regenerate")
    assert run.state == "succeeded" and run.progress == 100
    assert json.loads(published(export_dir)["manifest.json"])["job_run"] == run.pk
    # Queued again with nothing changed, the job keeps the set it published and says so.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("regenerate_exports", stdout=out)
    again = JobRun.objects.filter(job_name=run.job_name).latest("pk")
    assert again.state == "succeeded" and "Nothing changed" in again.message
    assert json.loads(published(export_dir)["manifest.json"])["job_run"] == run.pk


@pytest.mark.vendor
def test_the_downloads_page_lists_sizes_and_checksums(client, canonical_content, export_dir):
    empty = client.get("/downloads/")
    assert empty.status_code == 200 and "No export has been published yet" in empty.text
    assert client.get("/downloads/mica-catalogue.json").status_code == 404
    manifest = exports_build_and_publish(job_run_id=None)
    english, korean = client.get("/downloads/").text, client.get("/ko/downloads/").text
    assert len(manifest["files"]) >= 10, "the export set lists its files"
    for entry in manifest["files"]:
        assert entry["sha256"] in english and f'href="/downloads/{entry["name"]}"' in english
    assert "Public task catalogue (CSV)" in english
    assert "공개 과제 목록 (CSV)" in korean


@pytest.mark.vendor
def test_downloads_carry_etags_and_answer_304(client, canonical_content, export_dir):
    manifest = exports_build_and_publish(job_run_id=None)
    entry = next(f for f in manifest["files"] if f["name"] == "mica-catalogue.csv")
    response = client.get("/downloads/mica-catalogue.csv")
    assert response.status_code == 200
    assert response["ETag"] == f'"{entry["sha256"]}"'
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert b"".join(response.streaming_content).count(b"\n") == 101
    again = client.get("/downloads/mica-catalogue.csv", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    served = client.get("/downloads/manifest.json")
    assert json.loads(b"".join(served.streaming_content))["files"] == manifest["files"]


@pytest.mark.vendor
@pytest.mark.parametrize(
    "name", ["nope.json", "..%2Fmica.sqlite3", "%2Fetc%2Fpasswd", "builds", "current"]
)
def test_only_listed_files_are_served(client, canonical_content, export_dir, name):
    exports_build_and_publish(job_run_id=None)
    assert client.get(f"/downloads/{name}").status_code == 404


@pytest.mark.vendor
def test_the_downloads_page_runs_no_query_per_file(
    client, canonical_content, export_dir, django_assert_max_num_queries
):
    exports_build_and_publish(job_run_id=None)
    with django_assert_max_num_queries(3):
        assert client.get("/downloads/").status_code == 200


@pytest.mark.vendor
def test_the_nightly_run_reruns_the_gate_then_publishes(
    canonical_content, export_dir, settings, django_capture_on_commit_callbacks, eager_celery
):
    from mica.exports.tasks import nightly
    from mica.jobs.models import JobRun

    schedule = settings.CELERY_BEAT_SCHEDULE["nightly-full-regeneration"]
    assert schedule["task"] == nightly.name
    with django_capture_on_commit_callbacks(execute=True):
        nightly()
    run = JobRun.objects.get(job_name="mica.exports.tasks.full_regeneration")
    assert run.state == "succeeded", run.error
    files = len(EXPORT_FILES)
    assert run.message_en.startswith(f"0 cells recomputed. Published {files} files for edition")
    assert run.message_ko.startswith("셀 0개를 다시 계산했습니다. ")
    assert f"에디션의 파일 {files}개를 게시했습니다." in run.message_ko
    assert json.loads(published(export_dir)["manifest.json"])["job_run"] == run.pk


@pytest.mark.vendor
def test_the_published_croissant_loads_in_mlcroissant_with_the_published_files(
    canonical_content, export_dir
):
    import mlcroissant

    exports_build_and_publish(job_run_id=None)
    current = (Path(export_dir) / "current").resolve()
    names = ["mica-catalogue.json", "mica-catalogue.csv"]
    dataset = mlcroissant.Dataset(
        jsonld=current / "mica-catalogue.croissant.json",
        mapping={name: str(current / name) for name in names},
    )
    assert not dataset.metadata.ctx.issues.errors
    tasks = [record["tasks/id"].decode() for record in dataset.records("tasks")]
    assert len(tasks) == 100 and len(set(tasks)) == 100
