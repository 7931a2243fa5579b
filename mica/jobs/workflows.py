"""How a JobRun moves: a table of (state, action) -> state and one function."""

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from mica.bilingual import LANGUAGES
from mica.errors import InvalidTransition
from mica.jobs.models import JobRun, JobState

JOB_TRANSITIONS = {
    (JobState.QUEUED, "start"): JobState.RUNNING,
    # A redelivered job (acks_late after a lost worker) starts again.
    (JobState.RUNNING, "start"): JobState.RUNNING,
    (JobState.RUNNING, "report"): JobState.RUNNING,
    # A failed attempt with retries left goes back to the queue, its error kept.
    (JobState.RUNNING, "retry"): JobState.QUEUED,
    (JobState.RUNNING, "succeed"): JobState.SUCCEEDED,
    (JobState.RUNNING, "fail"): JobState.FAILED,
    (JobState.QUEUED, "fail"): JobState.FAILED,
    # Its worker is gone: its heartbeat stopped (services.job_runs_reap).
    (JobState.RUNNING, "reap"): JobState.FAILED,
    # Its message was lost (a broker down when it was sent, a purge): sent again.
    (JobState.QUEUED, "resend"): JobState.QUEUED,
}


def _message_set(job_run, message):
    # A lazily translated message is read once in each language.
    for language in LANGUAGES:
        with translation.override(language):
            setattr(job_run, f"message_{language}", str(message)[:500])


def _apply_effects(job_run, action, *, progress, message, error, worker, delivery, due_at):
    now = timezone.now()
    if action == "start":
        job_run.started_at = now
        job_run.worker = worker or ""
        job_run.delivery = delivery or ""
        job_run.attempts += 1
        job_run.progress = 0
    if job_run.state == JobState.RUNNING:
        # Every move of a running run is a sign of life.
        job_run.heartbeat_at = now
    if action in ("retry", "resend"):
        job_run.due_at = due_at or now
    if progress is not None:
        job_run.progress = max(0, min(100, int(progress)))
    if message is not None:
        _message_set(job_run, message)
    if action == "succeed":
        job_run.progress = 100
    if job_run.state in (JobState.SUCCEEDED, JobState.FAILED):
        job_run.finished_at = now
    if error is not None:
        job_run.error = error


def job_run_transition(
    *,
    job_run_id,
    action,
    progress=None,
    message=None,
    error=None,
    worker=None,
    delivery=None,
    due_at=None,
):
    """Lock the run, check the move against the table, apply it, save.

    `worker` and `delivery` (the message's id) are recorded by "start"; `due_at`, when
    a run put back in the queue should start, by "retry" and "resend"."""
    with transaction.atomic():
        job_run = JobRun.objects.select_for_update().get(pk=job_run_id)
        target = JOB_TRANSITIONS.get((job_run.state, action))
        if target is None:
            raise InvalidTransition(
                _("A job run that is %(state)s cannot %(action)s.")
                % {"state": job_run.get_state_display(), "action": action}
            )
        job_run.state = target
        _apply_effects(
            job_run,
            action,
            progress=progress,
            message=message,
            error=error,
            worker=worker,
            delivery=delivery,
            due_at=due_at,
        )
        job_run.save()
        return job_run
