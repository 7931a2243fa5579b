from celery import shared_task
from django.utils.translation import gettext_lazy as _

from mica.jobs.services import worker_heartbeat_record


@shared_task(
    name="mica.jobs.tasks.worker_heartbeat",
    ignore_result=True,
    acks_late=False,
    title=_("Worker heartbeat"),
)
def worker_heartbeat():
    # A liveness signal, not a job: it updates one row per worker instead of
    # writing a JobRun every interval.
    worker_heartbeat_record(hostname=worker_heartbeat.request.hostname or "eager")
