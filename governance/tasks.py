import datetime

from celery import shared_task
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from governance.gate import gate_recompute_all, recompute_underway
from governance.selectors import cells_stale_exist
from mica.jobs.models import JobRun, JobState
from mica.jobs.services import job_run_enqueue, job_run_execute
from mica.text import lazy_format

# A queued or running recompute younger than this covers a new change (it goes round
# again until the cells are fresh); an older one is presumed lost, and another is queued.
RECOMPUTE_COVERS = datetime.timedelta(minutes=10)


def cells_recomputed(count):
    return lazy_format(
        ngettext_lazy("%(count)d cell recomputed.", "%(count)d cells recomputed.", count),
        count=count,
    )


def _recompute(arguments, progress):
    return cells_recomputed(gate_recompute_all(progress=progress))


@shared_task(bind=True, name="governance.tasks.gate_recompute", title=_("Publication gate rerun"))
def gate_recompute(self, job_run_id):
    """Rerun the publication gate over every cell (after thresholds or records change)."""
    job_run_execute(job_run_id, _recompute, worker=self.request.hostname or "eager")


def cells_follow_inputs(sender, **kwargs):
    """After a commit, queue the recompute of cells its change left stale; until it has
    run, every reader counts them as blocked ("stale")."""
    if recompute_underway() or not cells_stale_exist():
        return
    underway = JobRun.objects.filter(
        job_name=gate_recompute.name,
        state__in=[JobState.QUEUED, JobState.RUNNING],
        queued_at__gte=timezone.now() - RECOMPUTE_COVERS,
    )
    if not underway.exists():
        job_run_enqueue(task=gate_recompute)
