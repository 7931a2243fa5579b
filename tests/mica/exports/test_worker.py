"""Export jobs in a real `celery worker` over Redis: end to end, killed, refused, debounced."""

import threading
import time

import pytest

from catalogue.models import TaskSet, TaskVersion
from catalogue.synthetic import synthetic_catalogue_create
from mica.exports.services import exports_request_regeneration
from mica.jobs.models import JobRun, JobState
from mica.methodology.models import ChapterItem
from tests.conftest import WorkerProcess, _test_database_url
from tests.mica.exports.conftest import assert_intact, published
from tests.support import job_run_finished, wait_for

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]

REGENERATE = "mica.exports.tasks.exports_regenerate"


@pytest.fixture
def workers(redis_broker, export_dir, canonical_content, tmp_path):
    """Start real workers that share the test database and the export directory."""
    started = []

    def start(**env):
        worker = WorkerProcess(
            _test_database_url(),
            tmp_path / f"worker-{len(started)}.log",
            MICA_EXPORT_DIR=str(export_dir),
            **env,
        )
        started.append(worker)
        worker.wait_until_ready()
        return worker

    yield start
    for worker in started:
        worker.stop()


def test_a_regeneration_end_to_end(workers, export_dir):
    worker = workers()
    job_run = exports_request_regeneration()
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.SUCCEEDED, job_run.error
    assert job_run.worker == worker.hostname and job_run.progress == 100
    manifest = assert_intact(published(export_dir))
    assert manifest["job_run"] == job_run.pk
    count = len(manifest["files"])
    assert job_run.message == f"Published {count} files for edition preview-0.1."
    # The worker wrote the message in Korean too, for the Korean admin.
    assert job_run.message_ko == f"preview-0.1 에디션의 파일 {count}개를 게시했습니다."


def test_a_worker_killed_mid_regeneration_is_replaced_and_the_old_set_stays_intact(
    workers, export_dir
):
    first = exports_request_regeneration()
    starter = workers()
    wait_for(job_run_finished(first))
    starter.stop()  # the next job must go to the worker that is killed
    before = published(export_dir)
    # A catalogue large enough that the worker is still writing when it dies.
    synthetic_catalogue_create(4000)
    job_run = exports_request_regeneration()
    doomed = workers(MICA_BROKER_VISIBILITY_TIMEOUT="5")

    def writing():
        """the regeneration to be under way"""
        job_run.refresh_from_db()
        return job_run.state == JobState.RUNNING and 10 <= job_run.progress < 85

    checks, stop = [], threading.Event()

    def watch_published_set():
        # Every look finds a whole set: the old one untouched, or the complete new one.
        while not stop.is_set():
            seen = published(export_dir)
            checks.append(seen == before or assert_intact(seen)["job_run"] == job_run.pk)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch_published_set)
    watcher.start()
    try:
        wait_for(writing, interval=0.05)
        doomed.kill()
        replacement = workers(MICA_BROKER_VISIBILITY_TIMEOUT="5")
        wait_for(job_run_finished(job_run), timeout=180)
    finally:
        stop.set()
        watcher.join()
    assert job_run.state == JobState.SUCCEEDED, job_run.error
    assert job_run.attempts == 2 and job_run.worker == replacement.hostname
    assert checks and all(checks), "a look at the published set found it half-switched"
    manifest = assert_intact(published(export_dir))
    assert manifest["job_run"] == job_run.pk
    assert b"synthetic-task-4000" in published(export_dir)["mica-catalogue.csv"]


def test_a_holdout_canary_makes_the_job_refuse_to_publish(workers, export_dir):
    workers()
    first = exports_request_regeneration()
    wait_for(job_run_finished(first))
    before = published(export_dir)
    [canary] = synthetic_catalogue_create(1, task_set=TaskSet.HOLDOUT, prefix="canary")
    claim = ChapterItem.objects.filter(item_type="claim").first()
    claim.detail_en += f" Compare {canary}."
    claim.save()
    job_run = exports_request_regeneration()
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.FAILED and job_run.attempts == 1  # a refusal is not retried
    # The refusal names the record to fix by number, and the canary nowhere.
    number = TaskVersion.objects.get(definition__slug=canary).pk
    assert f"Holdout content of task version {number} found in mica-methodology.en.md" in (
        job_run.message
    )
    assert canary not in job_run.message
    assert published(export_dir) == before


def test_ten_edits_queue_one_regeneration(workers, export_dir, settings):
    settings.EXPORTS_ON_CHANGE = True
    settings.EXPORT_DEBOUNCE_SECONDS = 3
    workers()
    claim = ChapterItem.objects.filter(item_type="claim").first()
    for number in range(1, 11):
        claim.detail_en = f"{claim.detail_en.split(' Edit ')[0]} Edit {number}."
        claim.save()  # each save commits on its own: ten transactions
    [job_run] = JobRun.objects.filter(job_name=REGENERATE)
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.SUCCEEDED, job_run.error
    assert b"Edit 10." in published(export_dir)["mica-methodology.en.md"]
    time.sleep(1)
    assert JobRun.objects.filter(job_name=REGENERATE).count() == 1


def test_an_unexpected_failure_is_retried_with_backoff(workers, export_dir):
    export_dir.parent.mkdir(parents=True, exist_ok=True)
    export_dir.write_text("a file where the export directory should be")
    workers()
    job_run = exports_request_regeneration()

    def requeued():
        """the first attempt to fail and go back to the queue"""
        job_run.refresh_from_db()
        return job_run.state == JobState.QUEUED and "runs again in 5 s" in job_run.message

    wait_for(requeued)
    export_dir.unlink()  # the cause goes away before the retry
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.SUCCEEDED and job_run.attempts == 2
    assert "FileExistsError" in job_run.error or "NotADirectoryError" in job_run.error
    assert_intact(published(export_dir))
