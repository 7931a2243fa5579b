import datetime
import traceback

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mica.errors import DomainError
from mica.jobs.models import JobRun, JobState, WorkerHeartbeat
from mica.jobs.workflows import job_run_transition
from mica.text import lazy_format

RETRY_BASE_SECONDS = 5
# A queued run older than its delay plus this is presumed lost (its message went with a
# purged broker, say); the next request queues another, and the nightly run covers the gap.
LOST_AFTER = datetime.timedelta(hours=1)


def job_run_enqueue(*, task, arguments=None, actor=None, countdown=None):
    """Record a queued JobRun and send the task once the transaction commits.

    The task receives only the run's primary key and re-reads its arguments,
    so a retried or redelivered message does the same work.
    """
    job_run = JobRun.objects.create(
        job_name=task.name,
        arguments=arguments or {},
        requested_by=actor if getattr(actor, "pk", None) else None,
    )
    transaction.on_commit(lambda: task.apply_async((job_run.pk,), countdown=countdown))
    return job_run


def job_request_debounced(task, delay):
    """Queue one run of `task` after a quiet spell; a burst of requests queues only one.

    The first request of a burst queues a run delayed by `delay` seconds; later ones
    ride along while it waits. Once it starts it is no longer queued, so a request made
    while it runs queues the next one. The waiting run is a row, not a flag in one
    process's memory: the web processes and the worker all see it.
    """
    waiting = JobRun.objects.filter(
        job_name=task.name,
        state=JobState.QUEUED,
        queued_at__gte=timezone.now() - datetime.timedelta(seconds=delay) - LOST_AFTER,
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
        message=lazy_format(
            _("This try failed (%(error)s); the job runs again in %(seconds)d s."),
            error=exc,
            seconds=countdown,
        ),
        error="".join(traceback.format_exception(exc)),
    )
    raise task.retry(exc=exc, countdown=countdown)


def job_run_execute(job_run_id, work, *, worker="eager", retry_task=None):
    """Run `work(arguments, progress)` as the given JobRun, recording every step.

    Returns False without doing anything when the run has already finished, so
    a duplicate delivery is harmless. With `retry_task`, an unexpected failure
    (not a refusal by a rule of the method) is retried with backoff before the
    run is marked failed.
    """
    job_run = JobRun.objects.get(pk=job_run_id)
    if job_run.state in (JobState.SUCCEEDED, JobState.FAILED):
        return False
    job_run_transition(job_run_id=job_run_id, action="start", worker=worker)

    def progress(percent, message=""):
        job_run_transition(
            job_run_id=job_run_id, action="report", progress=percent, message=message
        )

    try:
        summary = work(job_run.arguments, progress)
    except Exception as exc:  # every failure is recorded on the run, whatever it is
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
    job_run_transition(job_run_id=job_run_id, action="succeed", message=summary or "")
    return True


def worker_heartbeat_record(*, hostname):
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
