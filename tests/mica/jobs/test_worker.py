"""Jobs and health through a real Redis broker and a real `celery worker` process."""

import time

import pytest
from django.test import override_settings
from django.utils import timezone

from mica.jobs.models import JobState, WorkerHeartbeat
from mica.jobs.services import job_run_enqueue
from mica.jobs.tasks import worker_heartbeat
from mica.methodology.models import Edition
from mica.site.tasks import content_reload
from tests.support import MONITOR, job_run_finished, wait_for

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
    up = client.get("/healthz/system", **MONITOR)
    assert not {"worker-missing", "worker-stale", "broker-unreachable"} & _codes(up), up.json()

    celery_worker.stop()
    time.sleep(1.5)
    with override_settings(WORKER_HEARTBEAT_MAX_AGE=1):
        down = client.get("/healthz/system", **MONITOR)
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
    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    assert {"worker-missing", "queue-without-worker"} <= _codes(system)
    queue = next(p for p in system.json()["problems"] if p["code"] == "queue-without-worker")
    assert queue["messages"] >= 1
    assert queue["queue"] in queue["message"]["en"] and queue["queue"] in queue["message"]["ko"]
    app.control.purge()


# --- Recovery: a worker killed mid-job, a lost message, two beats ---------------------


CONTENT_APPS = ("methodology", "catalogue", "markets", "governance", "submissions")


def _content_locked(database_url):
    """Another session holds every table of the content, as a long job's work would be
    stuck: a job reaching them waits, while its run can still prove it is alive."""
    import psycopg

    session = psycopg.connect(database_url)
    session.execute("SET lock_timeout = '20s'")
    tables = [
        name
        for (name,) in session.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND ("
            + " OR ".join(f"tablename LIKE '{app}\\_%'" for app in CONTENT_APPS)
            + ")"
        )
    ]
    session.execute(
        "LOCK TABLE " + ", ".join(f'"{name}"' for name in tables) + " IN ACCESS EXCLUSIVE MODE"
    )
    return session


def test_a_worker_killed_mid_job_is_reaped_and_the_job_retried(
    redis_broker, canonical_content, settings, tmp_path
):
    """Issue 31: "A worker killed mid-job leaves its JobRun 'running' for an hour." Its run
    keeps a heartbeat of its own while the work goes on; once the worker is killed the
    heartbeat stops, the reaper fails the run and queues a fresh one, which a new worker
    does."""
    from mica.jobs.models import JobRun
    from mica.jobs.services import job_runs_reap
    from tests.conftest import WorkerProcess, _test_database_url

    database_url = _test_database_url()
    doomed = WorkerProcess(database_url, tmp_path / "doomed.log", MICA_JOB_HEARTBEAT_SECONDS="1")
    doomed.wait_until_ready()
    session = _content_locked(database_url)
    try:
        job_run = job_run_enqueue(task=content_reload)

        def beating():
            """the stuck run's own heartbeat to move"""
            job_run.refresh_from_db()
            return (
                job_run.state == JobState.RUNNING
                and job_run.heartbeat_at is not None
                and (job_run.heartbeat_at - job_run.started_at).total_seconds() >= 2
            )

        wait_for(beating)
        doomed.kill()
    finally:
        session.close()
    settings.JOB_SILENT_SECONDS = 2
    assert job_runs_reap()["reaped"] == []  # its last heartbeat is still recent
    time.sleep(3)
    outcome = job_runs_reap()
    job_run.refresh_from_db()
    assert outcome["reaped"] == [job_run.pk] and job_run.state == JobState.FAILED
    assert "Its worker stopped" in job_run.message_en and job_run.worker == doomed.hostname
    retry = JobRun.objects.get(retry_of=job_run)
    assert outcome["retries"] == [retry.pk]
    replacement = WorkerProcess(database_url, tmp_path / "replacement.log")
    try:
        replacement.wait_until_ready()
        wait_for(job_run_finished(retry))
    finally:
        replacement.stop()
    assert retry.state == JobState.SUCCEEDED, retry.error
    assert retry.worker == replacement.hostname


def test_a_lost_message_is_sent_again_and_blocks_nothing(redis_broker, settings, tmp_path):
    """Issue 31: "a lost message leaves a 'queued' row that blocks automatic bakes and
    regenerations for an hour"."""
    from mica.celery import app
    from mica.jobs.services import job_request_debounced, job_runs_reap
    from tests.conftest import WorkerProcess, _test_database_url

    settings.JOB_START_GRACE_SECONDS = 1
    lost = job_run_enqueue(task=content_reload, arguments={"sections": ["methodology"]})
    app.control.purge()  # the message is gone with the broker's queue
    time.sleep(1.5)
    ridden = job_request_debounced(content_reload, 0)
    assert ridden is not None and ridden.pk != lost.pk  # the lost run covers nothing
    app.control.purge()
    worker = WorkerProcess(_test_database_url(), tmp_path / "worker.log")
    try:
        worker.wait_until_ready()
        time.sleep(1.5)
        resent = job_runs_reap()["resent"]
        assert resent == [lost.pk, ridden.pk]
        wait_for(job_run_finished(lost))
        wait_for(job_run_finished(ridden))
    finally:
        worker.stop()
    assert lost.state == JobState.SUCCEEDED and lost.attempts == 1, lost.error
    assert ridden.state == JobState.SUCCEEDED


def _beat(database_url, log_path, schedule, **env):
    import os
    import subprocess
    import sys
    from pathlib import Path

    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "mica", "beat", "--loglevel", "INFO"]
        + ["--schedule", str(schedule)],
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "MICA_DATABASE_URL": database_url, **env},
        stdout=open(log_path, "w"),
        stderr=subprocess.STDOUT,
    )


def test_a_second_beat_waits_while_the_first_holds_the_lock(redis_broker, tmp_path):
    """Issue 31, item 5: "one beat is enforced with a lock"; two real beat processes."""
    from pathlib import Path

    from mica.jobs.models import BeatLease
    from tests.conftest import _test_database_url

    database_url = _test_database_url()
    env = {"MICA_BEAT_LEASE_SECONDS": "3"}
    first = _beat(database_url, tmp_path / "first.log", tmp_path / "first", **env)
    second = None
    try:

        def held_by(process):
            def check():
                """the beat lock to be held by the beat process"""
                lease = BeatLease.objects.filter(expires_at__gt=timezone.now()).first()
                return lease is not None and f":{process.pid}:" in lease.holder

            return check

        wait_for(held_by(first))
        second = _beat(database_url, tmp_path / "second.log", tmp_path / "second", **env)

        def second_waits():
            """the second beat to say it waits"""
            return "waits: another beat" in Path(tmp_path / "second.log").read_text()

        wait_for(second_waits)
        time.sleep(2)  # longer than the lease would last unrenewed by the first
        assert held_by(first)()
        assert "it sends the schedule" not in Path(tmp_path / "second.log").read_text()
        first.kill()  # no goodbye: the lease expires
        first.wait(timeout=30)
        wait_for(held_by(second), timeout=30)

        def second_sends():
            """the second beat to say it sends the schedule (logged once it took the lease)"""
            return "it sends the schedule" in Path(tmp_path / "second.log").read_text()

        wait_for(second_sends, timeout=10)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
    # Stopped, the second let the lock go at once.
    assert BeatLease.objects.get().expires_at <= timezone.now()
