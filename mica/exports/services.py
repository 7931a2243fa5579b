"""Queue export regenerations: on demand, after content changes (debounced) and nightly."""

import datetime

from django.conf import settings
from django.utils import timezone

from mica.jobs.models import JobRun, JobState
from mica.jobs.services import job_run_enqueue

# A queued run older than its delay plus this is presumed lost (its message went with a
# purged broker, say); the next edit queues another, and the nightly run covers the gap.
LOST_AFTER = datetime.timedelta(hours=1)


def exports_request_regeneration(*, actor=None, countdown=None):
    # Within the app: the task module imports this one as it loads.
    from mica.exports.tasks import exports_regenerate

    return job_run_enqueue(task=exports_regenerate, actor=actor, countdown=countdown)


def exports_request_debounced():
    """Queue one regeneration after a quiet spell; a burst of edits queues only one run.

    The first edit of a burst queues a run delayed by EXPORT_DEBOUNCE_SECONDS; later
    edits ride along while it waits. Once it starts it is no longer queued, so an edit
    made while it runs queues the next one. The waiting run is a row, not a flag in one
    process's memory: the web processes and the worker all see it.
    """
    from mica.exports.tasks import exports_regenerate

    delay = settings.EXPORT_DEBOUNCE_SECONDS
    waiting = JobRun.objects.filter(
        job_name=exports_regenerate.name,
        state=JobState.QUEUED,
        queued_at__gte=timezone.now() - datetime.timedelta(seconds=delay) - LOST_AFTER,
    )
    if waiting.exists():
        return None
    return exports_request_regeneration(countdown=delay)


def exports_follow_content(sender, **kwargs):
    """Committed content changes regenerate the exports where a worker runs them."""
    if settings.EXPORTS_ON_CHANGE:
        exports_request_debounced()
