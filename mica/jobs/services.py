import traceback

from django.db import transaction
from django.utils import timezone

from mica.jobs.models import JobRun, JobState, WorkerHeartbeat
from mica.jobs.workflows import job_run_transition


def job_run_enqueue(*, task, arguments=None, actor=None):
    """Record a queued JobRun and send the task once the transaction commits.

    The task receives only the run's primary key and re-reads its arguments,
    so a retried or redelivered message does the same work.
    """
    job_run = JobRun.objects.create(
        job_name=task.name,
        arguments=arguments or {},
        requested_by=actor if getattr(actor, "pk", None) else None,
    )
    transaction.on_commit(lambda: task.delay(job_run.pk))
    return job_run


def job_run_execute(job_run_id, work, *, worker="eager"):
    """Run `work(arguments, progress)` as the given JobRun, recording every step.

    Returns False without doing anything when the run has already finished, so
    a duplicate delivery is harmless.
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
        job_run_transition(
            job_run_id=job_run_id,
            action="fail",
            message=str(exc)[:500],
            error="".join(traceback.format_exception(exc)),
        )
        raise
    job_run_transition(job_run_id=job_run_id, action="succeed", message=summary or "")
    return True


def worker_heartbeat_record(*, hostname):
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults={"seen_at": timezone.now()}
    )
