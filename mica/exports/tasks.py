from celery import shared_task
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from governance.gate import gate_recompute_all
from governance.tasks import cells_recomputed
from mica.exports.publish import exports_build_and_publish
from mica.jobs.models import JobCause
from mica.jobs.services import job_run_enqueue, job_run_execute
from mica.text import lazy_format


def _scaled(progress, start, share):
    return lambda percent, message="": progress(start + percent * share // 100, message)


def _publish(job_run_id, progress, arguments):
    """The export set, written whole with {"full": true}, else only the files that changed."""
    full = arguments.get("full", False)
    manifest = exports_build_and_publish(job_run_id=job_run_id, full=full, progress=progress)
    if manifest.get("unchanged"):
        return _("Nothing changed since the published export set")
    return lazy_format(
        _("Published %(count)d files for edition %(edition)s."),
        count=len(manifest["files"]),
        edition=manifest["edition"]["slug"],
    )


def _run_tracked(task, job_run_id, work):
    job_run_execute(
        job_run_id,
        lambda arguments, progress: work(job_run_id, progress, arguments),
        worker=task.request.hostname or "eager",
        retry_task=task,
    )


@shared_task(
    bind=True,
    name="mica.exports.tasks.exports_regenerate",
    max_retries=3,
    title=_("Export regeneration"),
)
def exports_regenerate(self, job_run_id):
    """Write, check and publish every export of the current edition."""
    _run_tracked(self, job_run_id, _publish)


def _gate_then_exports(job_run_id, progress, _arguments):
    cells = gate_recompute_all(progress=_scaled(progress, 0, 50))
    # Every file written afresh: what the nightly run is for.
    published = _publish(job_run_id, _scaled(progress, 50, 50), {"full": True})
    return format_lazy("{} {}", cells_recomputed(cells), published)


@shared_task(
    bind=True,
    name="mica.exports.tasks.full_regeneration",
    max_retries=3,
    title=_("Gate rerun and export regeneration"),
)
def full_regeneration(self, job_run_id):
    """The gate rerun over every cell, then the exports, in that order, as one run."""
    _run_tracked(self, job_run_id, _gate_then_exports)


@shared_task(name="mica.exports.tasks.nightly", ignore_result=True, title=_("Nightly run"))
def nightly():
    """What beat sends every night: one tracked full regeneration."""
    job_run_enqueue(task=full_regeneration, cause=JobCause.SCHEDULE)
