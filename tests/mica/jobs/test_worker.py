"""Jobs and health through a real Redis broker and a real `celery worker` process."""

import time

import pytest
from django.test import override_settings

from mica.jobs.models import JobState, WorkerHeartbeat
from mica.jobs.services import job_run_enqueue
from mica.jobs.tasks import worker_heartbeat
from mica.methodology.models import Edition
from mica.site.tasks import content_reload
from tests.support import job_run_finished, wait_for

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]


def test_job_runs_queued_running_succeeded_in_the_worker(celery_worker):
    job_run = job_run_enqueue(task=content_reload)
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.SUCCEEDED, job_run.error
    assert job_run.worker == celery_worker.hostname
    assert job_run.progress == 100 and job_run.attempts == 1
    assert Edition.objects.filter(slug="preview-0.1").exists()


def test_failing_job_in_the_worker_records_its_error(celery_worker):
    job_run = job_run_enqueue(task=content_reload, arguments={"sections": ["nowhere"]})
    wait_for(job_run_finished(job_run))
    assert job_run.state == JobState.FAILED
    assert job_run.worker == celery_worker.hostname
    assert "Unknown content section: nowhere" in job_run.error


def test_healthz_follows_the_worker_up_and_down(client, celery_worker):
    before = WorkerHeartbeat.objects.get(hostname=celery_worker.hostname).seen_at
    worker_heartbeat.delay()

    def beat_advanced():
        """the periodic heartbeat to reach the database"""
        return WorkerHeartbeat.objects.get(hostname=celery_worker.hostname).seen_at > before

    wait_for(beat_advanced)
    up = client.get("/healthz")
    assert up.status_code == 200, up.json()
    assert up.json()["checks"]["worker"]["last_heartbeat_age_seconds"] < 30

    celery_worker.stop()
    time.sleep(1.5)
    with override_settings(WORKER_HEARTBEAT_MAX_AGE=1):
        down = client.get("/healthz")
    assert down.status_code == 503
    assert "older than 1 s" in down.json()["checks"]["worker"]["error"]


def test_healthz_without_any_worker_is_unavailable(client, redis_broker):
    assert not WorkerHeartbeat.objects.exists()
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["worker"]["error"] == (
        "no worker has ever reported a heartbeat"
    )
