from functools import cache

from celery import current_app as celery_app
from django.db.models import Max
from django.utils import timezone

from mica.jobs.models import BeatLease, JobRun, WorkerHeartbeat


def job_run_list():
    return JobRun.objects.select_related("requested_by")


def worker_heartbeat_age_seconds():
    """Seconds since any worker last reported, or None if none ever has."""
    newest = WorkerHeartbeat.objects.aggregate(newest=Max("seen_at"))["newest"]
    if newest is None:
        return None
    return max(0.0, (timezone.now() - newest).total_seconds())


@cache
def _tasks():
    # The tasks modules of every app, as a worker imports them when it starts; the web
    # process has imported only those its requests needed so far.
    celery_app.loader.import_default_modules()
    return celery_app.tasks


def job_title(job_name):
    """A job in words, as its task names itself (`title=` on the task), else its name."""
    return getattr(_tasks().get(job_name), "title", job_name)


def job_task(job_name):
    """The Celery task that runs the job `job_name`, or None if this release has none."""
    return _tasks().get(job_name)


def beat_lease_get(name="beat"):
    """The lease that names the beat sending the schedule, or None if none was taken."""
    return BeatLease.objects.filter(name=name).first()
