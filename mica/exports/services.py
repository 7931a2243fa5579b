"""Queue export regenerations: on demand, after content changes (debounced) and nightly."""

from django.conf import settings
from django.core.cache import cache

from mica.jobs.services import job_run_enqueue

# Set while a regeneration is queued and not yet started: later edits ride along.
PENDING_KEY = "exports:regeneration-pending"


def exports_request_regeneration(*, actor=None, countdown=None):
    # Within the app: the task module imports this one as it loads.
    from mica.exports.tasks import exports_regenerate

    return job_run_enqueue(task=exports_regenerate, actor=actor, countdown=countdown)


def exports_request_debounced():
    """Queue one regeneration after a quiet spell; a burst of edits queues only one run.

    The first edit of a burst sets the pending flag and queues a run delayed by
    EXPORT_DEBOUNCE_SECONDS; the run clears the flag as it starts, so an edit
    made while it runs queues the next one.
    """
    delay = settings.EXPORT_DEBOUNCE_SECONDS
    # The flag outlives a lost message by an hour at most; the nightly run covers that gap.
    if cache.add(PENDING_KEY, "1", timeout=delay + 3600):
        return exports_request_regeneration(countdown=delay)
    return None


def exports_pending_clear():
    cache.delete(PENDING_KEY)


def exports_follow_content(sender, **kwargs):
    """Committed content changes regenerate the exports where a worker runs them."""
    if settings.EXPORTS_ON_CHANGE:
        exports_request_debounced()
