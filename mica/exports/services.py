"""Queue export regenerations: on demand, after content changes (debounced) and nightly."""

from django.conf import settings

from mica.jobs.models import JobCause
from mica.jobs.services import job_request_debounced, job_run_enqueue


def exports_request_regeneration(*, actor=None, countdown=None, full=False, cause=JobCause.CHANGE):
    # Within the app: the task module imports this one as it loads.
    from mica.exports.tasks import exports_regenerate

    arguments = {"full": True} if full else None
    return job_run_enqueue(
        task=exports_regenerate,
        arguments=arguments,
        actor=actor,
        countdown=countdown,
        cause=cause,
    )


def exports_request_debounced():
    """Queue one regeneration after EXPORT_DEBOUNCE_SECONDS of quiet (job_request_debounced)."""
    from mica.exports.tasks import exports_regenerate

    return job_request_debounced(exports_regenerate, settings.EXPORT_DEBOUNCE_SECONDS)


def exports_follow_content(sender, **kwargs):
    """Committed content changes regenerate the exports where a worker runs them."""
    if settings.EXPORTS_ON_CHANGE:
        exports_request_debounced()
