from celery import shared_task

from governance.gate import gate_recompute_all
from mica.jobs.services import job_run_execute


def _recompute(arguments, progress):
    cells = gate_recompute_all(progress=progress)
    return f"cells recomputed: {cells}"


@shared_task(bind=True, name="governance.tasks.gate_recompute")
def gate_recompute(self, job_run_id):
    """Rerun the publication gate over every cell (after thresholds or records change)."""
    job_run_execute(job_run_id, _recompute, worker=self.request.hostname or "eager")
