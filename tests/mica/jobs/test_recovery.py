"""Jobs that recover: a run whose worker died is reaped and retried, a run whose message was
lost is sent again and blocks nothing, one beat holds the lock, publication has a queue of
its own. In this process (every profile); the real worker and beat processes are in
test_worker.py."""

import datetime
import shlex
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.utils import timezone, translation

from mica.celery import app
from mica.jobs.models import BeatLease, JobRun, JobState
from mica.jobs.services import (
    _job_run_start,
    beat_lease_release,
    beat_lease_take,
    job_request_debounced,
    job_run_enqueue,
    job_runs_reap,
)
from mica.jobs.workflows import job_run_transition
from mica.site.tasks import content_reload

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _eager(eager_celery):
    """A retried or re-sent run runs in this process, whatever the profile."""


@pytest.fixture(autouse=True)
def _no_runs_from_before():
    """The reaper looks at every run: each test starts with none (rolled back after)."""
    JobRun.objects.all().delete()


def _running(*, silent_for, **fields):
    """A run some worker started, whose last sign of life is `silent_for` seconds old."""
    job_run = JobRun.objects.create(job_name=content_reload.name, **fields)
    job_run_transition(job_run_id=job_run.pk, action="start", worker="gone@host", delivery="m1")
    long_ago = timezone.now() - datetime.timedelta(seconds=silent_for)
    JobRun.objects.filter(pk=job_run.pk).update(heartbeat_at=long_ago, started_at=long_ago)
    return job_run


def test_a_run_whose_heartbeat_stopped_is_failed_and_retried(
    settings, django_capture_on_commit_callbacks
):
    """Issue 31, item 5: "A run whose worker is gone is detected by its heartbeat and
    marked failed, then retried"."""
    settings.JOB_SILENT_SECONDS = 120
    dead = _running(silent_for=600, arguments={"sections": ["methodology"]})
    with django_capture_on_commit_callbacks(execute=True):
        outcome = job_runs_reap()
    dead.refresh_from_db()
    assert dead.state == JobState.FAILED and dead.finished_at is not None
    retry = JobRun.objects.get(retry_of=dead)
    assert outcome == {"reaped": [dead.pk], "retries": [retry.pk], "resent": []}
    assert dead.message_en.startswith("Its worker stopped: no sign of life for 6")
    assert f"Run #{retry.pk} does the job again." in dead.message_en
    assert "워커가 멈췄습니다" in dead.message_ko and f"#{retry.pk}" in dead.message_ko
    assert "gone@host" in dead.error
    # The retry does the same job with the same arguments, here at once (eager).
    assert retry.arguments == {"sections": ["methodology"]}
    assert retry.state == JobState.SUCCEEDED, retry.error


def test_a_job_whose_worker_died_is_retried_within_a_minute(
    settings, django_capture_on_commit_callbacks
):
    """Issue 42: "Recovery in a minute. A job whose worker died is retried within 60 s".
    With the settings as shipped: a run silent past JOB_SILENT_SECONDS is retried at the
    reaper's next tick, which comes every JOB_REAP_INTERVAL, so silence plus one tick is
    under a minute; a run that missed fewer heartbeats is left to its worker."""
    from mica.celery import app

    tick = app.conf.beat_schedule["job-runs-reap"]["schedule"]
    assert settings.JOB_SILENT_SECONDS + tick < 60
    assert settings.JOB_SILENT_SECONDS >= 3 * settings.JOB_HEARTBEAT_SECONDS
    alive = _running(silent_for=settings.JOB_SILENT_SECONDS - 5)
    dead = _running(silent_for=settings.JOB_SILENT_SECONDS + 1, arguments={"sections": []})
    with django_capture_on_commit_callbacks(execute=True):
        outcome = job_runs_reap()
    assert outcome["reaped"] == [dead.pk]
    assert JobRun.objects.get(pk=alive.pk).state == JobState.RUNNING
    assert JobRun.objects.filter(retry_of=dead).exists()


def test_a_run_that_keeps_its_heartbeat_is_left_alone(settings):
    settings.JOB_SILENT_SECONDS = 120
    alive = _running(silent_for=30)
    assert job_runs_reap() == {"reaped": [], "retries": [], "resent": []}
    alive.refresh_from_db()
    assert alive.state == JobState.RUNNING


def test_progress_reports_move_the_heartbeat():
    job_run = _running(silent_for=600)
    before = JobRun.objects.get(pk=job_run.pk).heartbeat_at
    job_run_transition(job_run_id=job_run.pk, action="report", progress=10)
    assert JobRun.objects.get(pk=job_run.pk).heartbeat_at > before


def test_a_job_is_retried_only_so_many_times(settings, django_capture_on_commit_callbacks):
    settings.JOB_REAP_RETRIES = 2
    first = _running(silent_for=600)
    second = _running(silent_for=600, retry_of=first)
    third = _running(silent_for=600, retry_of=second)
    JobRun.objects.filter(pk__in=[first.pk, second.pk]).update(state=JobState.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = job_runs_reap()
    assert outcome == {"reaped": [third.pk], "retries": [], "resent": []}
    third.refresh_from_db()
    assert third.state == JobState.FAILED
    assert "was tried 3 times and is not tried again" in third.message_en
    assert not JobRun.objects.filter(retry_of=third).exists()
    with translation.override("ko"):
        assert "3번 시도되었으므로" in third.message_ko


def _lost(**fields):
    """A queued run whose message never reached a worker (captured, never sent)."""
    return JobRun.objects.create(job_name=content_reload.name, **fields)


def test_a_lost_queued_run_blocks_a_debounced_request_only_for_the_grace(
    settings, django_capture_on_commit_callbacks
):
    """Issue 31, item 5: "a lost 'queued' run never blocks later runs"."""
    settings.JOB_START_GRACE_SECONDS = 60
    due = timezone.now() - datetime.timedelta(seconds=30)
    waiting = _lost(due_at=due)
    with django_capture_on_commit_callbacks(execute=False):
        assert job_request_debounced(content_reload, 10) is None  # it rides along
        JobRun.objects.filter(pk=waiting.pk).update(due_at=due - datetime.timedelta(seconds=40))
        another = job_request_debounced(content_reload, 10)
    assert another is not None and another.state == JobState.QUEUED
    assert another.due_at > timezone.now()  # due after its debounce


def test_the_reaper_sends_a_lost_queued_run_again(settings, django_capture_on_commit_callbacks):
    settings.JOB_START_GRACE_SECONDS = 60
    late = _lost(due_at=timezone.now() - datetime.timedelta(seconds=61))
    on_time = _lost(due_at=timezone.now() - datetime.timedelta(seconds=5))
    with django_capture_on_commit_callbacks(execute=True):
        outcome = job_runs_reap()
    assert outcome == {"reaped": [], "retries": [], "resent": [late.pk]}
    late.refresh_from_db()
    on_time.refresh_from_db()
    assert late.state == JobState.SUCCEEDED, late.error  # sent again, and run (eager)
    assert on_time.state == JobState.QUEUED


def test_a_resend_of_a_run_that_started_meanwhile_changes_nothing(settings):
    settings.JOB_START_GRACE_SECONDS = 0
    job_run = _running(silent_for=1)
    assert job_runs_reap()["resent"] == []
    assert JobRun.objects.get(pk=job_run.pk).state == JobState.RUNNING


def test_a_second_message_for_a_running_run_does_not_start_it_again(settings):
    """A run sent again while it waited, and then started by its first message: the
    second message is dropped, while a redelivery of the first (its worker lost) or any
    message once the run's heartbeat stopped starts it again."""
    settings.JOB_SILENT_SECONDS = 120
    job_run = _running(silent_for=5)
    assert _job_run_start(job_run.pk, worker="w2", delivery="m2") is None
    restarted = _job_run_start(job_run.pk, worker="w1", delivery="m1")
    assert restarted.state == JobState.RUNNING and restarted.attempts == 2
    JobRun.objects.filter(pk=job_run.pk).update(
        heartbeat_at=timezone.now() - datetime.timedelta(seconds=600)
    )
    taken_over = _job_run_start(job_run.pk, worker="w2", delivery="m2")
    assert taken_over.worker == "w2" and taken_over.attempts == 3
    JobRun.objects.filter(pk=job_run.pk).update(state=JobState.SUCCEEDED)
    assert _job_run_start(job_run.pk, worker="w1", delivery="m1") is None


def test_an_unknown_job_lost_in_the_queue_is_failed_not_sent(settings):
    settings.JOB_START_GRACE_SECONDS = 0
    JobRun.objects.create(
        job_name="no.such.task", due_at=timezone.now() - datetime.timedelta(seconds=5)
    )
    assert job_runs_reap()["resent"] == []
    run = JobRun.objects.get(job_name="no.such.task")
    assert run.state == JobState.FAILED and "no.such.task" in run.message_en


def test_enqueued_runs_record_when_they_are_due(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        job_run = job_run_enqueue(task=content_reload, countdown=20)
    assert 19 <= (job_run.due_at - job_run.queued_at).total_seconds() <= 21


# --- One beat -----------------------------------------------------------------------


def test_one_beat_holds_the_lease_until_it_lets_go_or_it_expires():
    """Issue 31, item 5: "one beat is enforced with a lock"."""
    assert beat_lease_take(holder="beat-a", seconds=60)
    assert not beat_lease_take(holder="beat-b", seconds=60)
    assert beat_lease_take(holder="beat-a", seconds=60)  # renewed
    beat_lease_release(holder="beat-b")  # not its to release
    assert not beat_lease_take(holder="beat-b", seconds=60)
    beat_lease_release(holder="beat-a")
    assert beat_lease_take(holder="beat-b", seconds=60)
    BeatLease.objects.update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    assert beat_lease_take(holder="beat-a", seconds=60)  # b stopped renewing it
    assert BeatLease.objects.get().holder == "beat-a"


def test_a_beat_that_does_not_hold_the_lease_sends_nothing(tmp_path, caplog):
    from mica.jobs.beat import LeasedScheduler

    beat_lease_take(holder="the-other-beat", seconds=60)
    scheduler = LeasedScheduler(app=app, schedule_filename=str(tmp_path / "schedule"), lazy=True)
    scheduler.setup_schedule()
    heartbeat = scheduler.schedule["worker-heartbeat"]
    heartbeat.last_run_at = timezone.now() - datetime.timedelta(hours=1)  # due
    with caplog.at_level("WARNING", logger="celery.beat"):
        assert scheduler.tick() <= django_settings.BEAT_LEASE_SECONDS
    assert scheduler.lease_held is False and heartbeat.total_run_count == 0
    assert "waits: another beat (the-other-beat) holds the beat lock" in caplog.text
    beat_lease_release(holder="the-other-beat")
    with caplog.at_level("INFO", logger="celery.beat"):
        scheduler.tick()
    assert scheduler.lease_held is True and "it sends the schedule" in caplog.text
    assert "Sending due task worker-heartbeat" in caplog.text
    assert scheduler.schedule["worker-heartbeat"].total_run_count == 1
    scheduler.close()
    assert BeatLease.objects.get().expires_at <= timezone.now()


# --- Queues -------------------------------------------------------------------------

PUBLISH = [
    "mica.site.tasks.pages_bake_run",
    "mica.exports.tasks.exports_regenerate",
    "mica.exports.tasks.full_regeneration",
]
MAIL = [
    "submissions.tasks.outbox_send",
    "submissions.tasks.outbox_sweep",
    "mica.jobs.tasks.worker_heartbeat",
    "mica.jobs.tasks.job_runs_reap",
]


@pytest.mark.parametrize(
    "task, queue",
    [(name, "publish") for name in PUBLISH]
    + [(name, "mail") for name in MAIL]
    + [
        ("governance.tasks.gate_recompute", "celery"),
        ("mica.site.tasks.content_reload", "celery"),
        ("submissions.tasks.challenge_recompute", "celery"),
    ],
)
def test_each_task_goes_to_its_queue(task, queue):
    """Issue 31, item 5: "publication runs on a queue of its own at concurrency 1; mail and
    heartbeats on another"."""
    app.loader.import_default_modules()
    assert task in app.tasks
    route = app.amqp.router.route({}, task)["queue"]
    # Its own routing key: the three queues share the exchange, and a message goes only
    # to the queue bound with its key.
    assert (route.name, route.routing_key) == (queue, queue)


def test_the_schedule_runs_the_reaper_and_the_sweep():
    schedule = {entry["task"] for entry in django_settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"mica.jobs.tasks.job_runs_reap", "submissions.tasks.outbox_sweep"} <= schedule
    assert django_settings.CELERY_BEAT_SCHEDULER == "mica.jobs.beat:LeasedScheduler"


def _exec_start(unit):
    text = (ROOT / "deploy" / "systemd" / unit).read_text()
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def test_the_systemd_workers_split_the_queues():
    publisher = _exec_start("mica-publisher.service")
    assert publisher[publisher.index("--queues") + 1] == "publish"
    assert publisher[publisher.index("--pool") + 1] == "solo"
    assert publisher[publisher.index("--concurrency") + 1] == "1"
    worker = _exec_start("mica-worker.service")
    assert set(worker[worker.index("--queues") + 1].split(",")) == {"celery", "mail"}
    assert (
        "PartOf=mica-beat.service" in (ROOT / "deploy/systemd/mica-publisher.service").read_text()
    )


def test_the_embedded_worker_takes_every_queue():
    """`manage.py serve` runs one solo worker with beat, which must take all three queues."""
    from mica.site.management.commands.serve import Command

    arguments = Command().worker_arguments()
    queues = arguments[arguments.index("--queues") + 1]
    assert set(queues.split(",")) == {"celery", "publish", "mail"}
    assert "--beat" in arguments and arguments[arguments.index("--pool") + 1] == "solo"
