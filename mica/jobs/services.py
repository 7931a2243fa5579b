import datetime
import logging
import threading
import traceback
from contextlib import contextmanager

from celery import current_task
from django.conf import settings
from django.db import DatabaseError, IntegrityError, connections, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from kombu.exceptions import KombuError

from mica.errors import DomainError, InvalidTransition
from mica.jobs.models import BeatLease, JobCause, JobRun, JobState, WorkerHeartbeat
from mica.jobs.selectors import job_task
from mica.jobs.workflows import job_run_transition
from mica.text import lazy_format

logger = logging.getLogger(__name__)

RETRY_BASE_SECONDS = 5
FINISHED = (JobState.SUCCEEDED, JobState.FAILED)


def task_send(task, *args, countdown=None):
    """Send `task` to the broker; False, logged, when the broker cannot take it.

    Called after a commit: the rows are stored and the request that wrote them answers
    as if the send had worked. What was not sent is still a queued JobRun or a pending
    outbox message, which the reaper and the outbox sweep send once the broker is back.
    """
    try:
        task.apply_async(args, countdown=countdown)
    except (KombuError, OSError) as unreachable:
        logger.warning(
            "The broker did not take %s%r (%s); it stays queued in the database and is "
            "sent again once the broker answers.",
            task.name,
            args,
            unreachable,
        )
        return False
    return True


def job_run_enqueue(
    *, task, arguments=None, actor=None, countdown=None, retry_of=None, cause=JobCause.CHANGE
):
    """Record a queued JobRun and send the task once the transaction commits.

    The task receives only the run's primary key and re-reads its arguments,
    so a retried or redelivered message does the same work. A send the broker refuses
    leaves the run queued; the reaper sends it again (job_runs_reap).
    """
    job_run = JobRun.objects.create(
        job_name=task.name,
        arguments=arguments or {},
        requested_by=actor if getattr(actor, "pk", None) else None,
        cause=_cause(actor, retry_of, cause),
        due_at=timezone.now() + datetime.timedelta(seconds=countdown or 0),
        retry_of=retry_of,
    )
    transaction.on_commit(lambda: task_send(task, job_run.pk, countdown=countdown))
    return job_run


def _cause(actor, retry_of, cause):
    if getattr(actor, "pk", None):
        return JobCause.PERSON
    return JobCause.RETRY if retry_of else cause


def job_request_debounced(task, delay):
    """Queue one run of `task` after a quiet spell; a burst of requests queues only one.

    The first request of a burst queues a run delayed by `delay` seconds; later ones
    ride along while it waits. Once it starts it is no longer queued, so a request made
    while it runs queues the next one. The waiting run is a row, not a flag in one
    process's memory: the web processes and the worker all see it. A run that has not
    started JOB_START_GRACE_SECONDS after it was due (its message lost) covers nothing:
    the request queues another, and the reaper sends the lost one again.
    """
    waiting = JobRun.objects.filter(
        job_name=task.name,
        state=JobState.QUEUED,
        due_at__gte=timezone.now() - datetime.timedelta(seconds=settings.JOB_START_GRACE_SECONDS),
    )
    if waiting.exists():
        return None
    return job_run_enqueue(task=task, countdown=delay)


def _retry_later(job_run_id, task, exc):
    """Put the run back in the queue with a growing delay, if the task has retries left."""
    if task is None or task.request.is_eager or task.request.retries >= task.max_retries:
        return
    countdown = RETRY_BASE_SECONDS * 2**task.request.retries
    job_run_transition(
        job_run_id=job_run_id,
        action="retry",
        due_at=timezone.now() + datetime.timedelta(seconds=countdown),
        message=lazy_format(
            _("This try failed (%(error)s); the job runs again in %(seconds)d s."),
            error=exc,
            seconds=countdown,
        ),
        error="".join(traceback.format_exception(exc)),
    )
    raise task.retry(exc=exc, countdown=countdown)


def _heartbeat_stale(job_run, now):
    last = job_run.heartbeat_at or job_run.started_at
    return last is None or (now - last).total_seconds() > settings.JOB_SILENT_SECONDS


def _job_run_start(job_run_id, *, worker, delivery):
    """Start the run for this delivery, or None when it is not this delivery's to start.

    A finished run is not started again. A running one is started again only by a
    redelivery of the message that started it (its worker was lost) or once its own
    heartbeat has stopped; another message for it (sent again while it waited) leaves
    it to the worker that runs it.
    """
    with transaction.atomic():
        job_run = JobRun.objects.select_for_update().get(pk=job_run_id)
        if job_run.state in FINISHED:
            return None
        if (
            job_run.state == JobState.RUNNING
            and job_run.delivery
            and job_run.delivery != delivery
            and not _heartbeat_stale(job_run, timezone.now())
        ):
            logger.info("Job run %s already runs under another message; skipped.", job_run_id)
            return None
        return job_run_transition(
            job_run_id=job_run_id, action="start", worker=worker, delivery=delivery
        )


def _heartbeat_record(job_run_id):
    # A run locked by its own work (a progress report inside the job's transaction) is
    # skipped: the lock is held by a live connection, so the run is alive, and the reaper
    # skips it too.
    with transaction.atomic():
        running = JobRun.objects.select_for_update(skip_locked=True).filter(
            pk=job_run_id, state=JobState.RUNNING
        )
        if running.first() is not None:
            JobRun.objects.filter(pk=job_run_id).update(heartbeat_at=timezone.now())


def _heartbeat_beside(job_run_id, stop):
    try:
        while not stop.wait(settings.JOB_HEARTBEAT_SECONDS):
            try:
                _heartbeat_record(job_run_id)
            except DatabaseError as exc:  # a busy or absent database: try at the next beat
                logger.warning("Job run %s: its heartbeat was not recorded (%s).", job_run_id, exc)
    finally:
        connections.close_all()  # this thread's own connections


@contextmanager
def _heartbeat_kept(job_run_id, *, in_worker):
    """While the work runs, a thread moves the run's heartbeat every JOB_HEARTBEAT_SECONDS,
    however long the work goes without a progress report; it stops with the process."""
    if not in_worker:
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(
        target=_heartbeat_beside,
        args=(job_run_id, stop),
        name=f"job-run-{job_run_id}-heartbeat",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def _still_running(job_run_id):
    return JobRun.objects.filter(pk=job_run_id, state=JobState.RUNNING).exists()


def job_run_execute(job_run_id, work, *, worker="eager", retry_task=None):
    """Run `work(arguments, progress)` as the given JobRun, recording every step.

    Returns False without doing anything when the run has already finished, or runs
    under another message, so a duplicate delivery is harmless. In a worker, the run
    keeps a heartbeat of its own while the work goes on (job_runs_reap reads it). With
    `retry_task`, an unexpected failure (not a refusal by a rule of the method) is
    retried with backoff before the run is marked failed.
    """
    request = current_task.request if current_task else None
    delivery = (request.id if request else None) or ""
    job_run = _job_run_start(job_run_id, worker=worker, delivery=delivery)
    if job_run is None:
        return False

    def progress(percent, message=""):
        job_run_transition(
            job_run_id=job_run_id, action="report", progress=percent, message=message
        )

    in_worker = bool(request) and not request.is_eager
    try:
        with _heartbeat_kept(job_run_id, in_worker=in_worker):
            summary = work(job_run.arguments, progress)
    except Exception as exc:  # every failure is recorded on the run, whatever it is
        if not _still_running(job_run_id):
            # Reaped meanwhile (its heartbeat was late): the reaper's retry does the work.
            logger.warning("Job run %s was reaped while it ran: %s", job_run_id, exc)
            return False
        if not isinstance(exc, DomainError):
            _retry_later(job_run_id, retry_task, exc)
        job_run_transition(
            job_run_id=job_run_id,
            action="fail",
            # A refusal's message may be lazy, and so readable in every language.
            message=exc.message if isinstance(exc, DomainError) else str(exc),
            error="".join(traceback.format_exception(exc)),
        )
        raise
    try:
        job_run_transition(job_run_id=job_run_id, action="succeed", message=summary or "")
    except InvalidTransition:
        logger.warning("Job run %s finished its work after it was reaped.", job_run_id)
        return False
    return True


def _retries_before(job_run):
    count = 0
    while job_run.retry_of_id is not None:
        count += 1
        job_run = JobRun.objects.get(pk=job_run.retry_of_id)
    return count


def _reap(job_run_id, now):
    """Fail a running run whose heartbeat stopped and queue a fresh run of its job."""
    with transaction.atomic():
        # A run locked by another transaction is held by a live connection: its work
        # reported progress inside its own transaction, or it is moving right now.
        job_run = JobRun.objects.select_for_update(skip_locked=True).filter(pk=job_run_id).first()
        if (
            job_run is None
            or job_run.state != JobState.RUNNING
            or not _heartbeat_stale(job_run, now)
        ):
            return None
        last = job_run.heartbeat_at or job_run.started_at
        silent = int((now - last).total_seconds())
        task = job_task(job_run.job_name)
        retries = _retries_before(job_run)
        retry = None
        if task is not None and retries < settings.JOB_REAP_RETRIES:
            retry = job_run_enqueue(
                task=task,
                arguments=job_run.arguments,
                actor=job_run.requested_by,
                retry_of=job_run,
            )
            message = lazy_format(
                _(
                    "Its worker stopped: no sign of life for %(seconds)d s. "
                    "Run #%(retry)d does the job again."
                ),
                seconds=silent,
                retry=retry.pk,
            )
        else:
            message = lazy_format(
                _(
                    "Its worker stopped: no sign of life for %(seconds)d s. The job was "
                    "tried %(tries)d times and is not tried again by itself."
                ),
                seconds=silent,
                tries=retries + 1,
            )
        job_run_transition(
            job_run_id=job_run_id,
            action="reap",
            message=message,
            error=f"No heartbeat from worker {job_run.worker or '?'} since {last.isoformat()}; "
            f"reaped at {now.isoformat()}.",
        )
        return retry


def _resend(job_run_id, now):
    """Send a queued run again whose message was lost; None when it is no longer late."""
    grace = datetime.timedelta(seconds=settings.JOB_START_GRACE_SECONDS)
    with transaction.atomic():
        job_run = JobRun.objects.select_for_update().get(pk=job_run_id)
        if job_run.state != JobState.QUEUED or (job_run.due_at or job_run.queued_at) + grace > now:
            return None
        task = job_task(job_run.job_name)
        if task is None:
            return job_run_transition(
                job_run_id=job_run_id,
                action="fail",
                message=lazy_format(
                    _("No job is called %(job)s in this release."), job=job_run.job_name
                ),
            )
        moved = job_run_transition(
            job_run_id=job_run_id,
            action="resend",
            due_at=now,
            message=_("It had not started when it was due: its message is sent again."),
        )
        transaction.on_commit(lambda: task_send(task, job_run_id))
        return moved


def job_runs_reap(*, now=None):
    """What beat runs every JOB_REAP_INTERVAL seconds: recover the runs the workers lost.

    A running run whose heartbeat is older than JOB_SILENT_SECONDS has lost its
    worker (killed, its machine gone): it is failed, and a fresh run of the same job is
    queued unless it has been retried JOB_REAP_RETRIES times. A queued run that has not
    started JOB_START_GRACE_SECONDS after it was due lost its message (the broker was
    down when it was sent, or purged): it is sent again; a duplicate delivery is
    harmless (job_run_execute). Returns {"reaped": [...], "retries": [...], "resent": [...]}
    (primary keys).
    """
    now = now or timezone.now()
    stale = now - datetime.timedelta(seconds=settings.JOB_SILENT_SECONDS)
    late = now - datetime.timedelta(seconds=settings.JOB_START_GRACE_SECONDS)
    dead = JobRun.objects.filter(state=JobState.RUNNING).filter(
        Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True, started_at__lt=stale)
    )
    lost = JobRun.objects.filter(state=JobState.QUEUED).filter(
        Q(due_at__lt=late) | Q(due_at__isnull=True, queued_at__lt=late)
    )
    outcome = {"reaped": [], "retries": [], "resent": []}
    for job_run_id in dead.order_by("pk").values_list("pk", flat=True):
        try:
            retry = _reap(job_run_id, now)
        except InvalidTransition:  # it moved meanwhile
            continue
        outcome["reaped"].append(job_run_id)
        if retry is not None:
            outcome["retries"].append(retry.pk)
    for job_run_id in lost.order_by("pk").values_list("pk", flat=True):
        try:
            moved = _resend(job_run_id, now)
        except InvalidTransition:
            continue
        if moved is not None and moved.state == JobState.QUEUED:
            outcome["resent"].append(job_run_id)
    if any(outcome.values()):
        logger.warning("Job runs recovered: %s", outcome)
    return outcome


def worker_heartbeat_record(*, hostname):
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )


def beat_lease_take(*, holder, seconds, name="beat"):
    """Take or renew the lease `name` for `holder`; False while another holds it.

    Conditional updates, so two beats racing for it never both win, on SQLite as on
    PostgreSQL."""
    now = timezone.now()
    until = now + datetime.timedelta(seconds=seconds)
    leases = BeatLease.objects.filter(name=name)
    if leases.filter(holder=holder, expires_at__gt=now).update(expires_at=until):
        return True
    if leases.filter(expires_at__lte=now).update(holder=holder, acquired_at=now, expires_at=until):
        return True
    try:
        with transaction.atomic():
            BeatLease.objects.create(name=name, holder=holder, acquired_at=now, expires_at=until)
    except IntegrityError:  # another took it first
        return False
    return True


def beat_lease_release(*, holder, name="beat"):
    """Let the lease go at once, so another beat takes over without waiting for it."""
    BeatLease.objects.filter(name=name, holder=holder).update(expires_at=timezone.now())
