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


def _codes(response):
    return {problem["code"] for problem in response.json()["problems"]}


def test_the_system_health_follows_the_worker_up_and_down(client, celery_worker):
    before = WorkerHeartbeat.objects.get(hostname=celery_worker.hostname).seen_at
    worker_heartbeat.delay()

    def beat_advanced():
        """the periodic heartbeat to reach the database"""
        return WorkerHeartbeat.objects.get(hostname=celery_worker.hostname).seen_at > before

    wait_for(beat_advanced)
    up = client.get("/healthz/system")
    assert not {"worker-missing", "worker-stale", "broker-unreachable"} & _codes(up), up.json()

    celery_worker.stop()
    time.sleep(1.5)
    with override_settings(WORKER_HEARTBEAT_MAX_AGE=1):
        down = client.get("/healthz/system")
        # The node still serves: a load balancer must not take it out.
        assert client.get("/healthz").status_code == 200
    assert down.status_code == 503
    stale = next(p for p in down.json()["problems"] if p["code"] == "worker-stale")
    assert "more than 1:" in stale["message"]["en"]


def test_a_queue_without_a_worker_is_named_and_the_node_stays_up(client, redis_broker):
    """Messages wait in Redis and no worker takes them: /healthz said "ok" (issue 31)."""
    from mica.celery import app

    assert not WorkerHeartbeat.objects.exists()
    app.send_task(worker_heartbeat.name)
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    system = client.get("/healthz/system")
    assert system.status_code == 503
    assert {"worker-missing", "queue-without-worker"} <= _codes(system)
    queue = next(p for p in system.json()["problems"] if p["code"] == "queue-without-worker")
    assert queue["messages"] >= 1
    assert queue["queue"] in queue["message"]["en"] and queue["queue"] in queue["message"]["ko"]
    app.control.purge()
