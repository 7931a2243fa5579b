from django.db.models import Max
from django.utils import timezone

from mica.jobs.models import JobRun, WorkerHeartbeat


def job_run_list():
    return JobRun.objects.select_related("requested_by")


def worker_heartbeat_age_seconds():
    """Seconds since any worker last reported, or None if none ever has."""
    newest = WorkerHeartbeat.objects.aggregate(newest=Max("seen_at"))["newest"]
    if newest is None:
        return None
    return max(0.0, (timezone.now() - newest).total_seconds())
