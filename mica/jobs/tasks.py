from celery import shared_task
from django.utils.translation import gettext_lazy as _

from mica.jobs import services


@shared_task(
    name="mica.jobs.tasks.worker_heartbeat",
    ignore_result=True,
    acks_late=False,
    title=_("Worker heartbeat"),
)
def worker_heartbeat():
    # A liveness signal, not a job: it updates one row per worker instead of
    # writing a JobRun every interval.
    services.worker_heartbeat_record(hostname=worker_heartbeat.request.hostname or "eager")


@shared_task(
    name="mica.jobs.tasks.job_runs_reap",
    ignore_result=True,
    acks_late=False,
    title=_("Recovery of lost job runs"),
)
def job_runs_reap():
    """What beat sends every JOB_REAP_INTERVAL seconds: fail and retry the runs whose
    worker died, send again the queued runs whose message was lost."""
    services.job_runs_reap()
