from governance.gate import gate_recompute_all
from governance.tasks import gate_recompute
from mica.jobs.commands import JobCommand
from mica.jobs.models import JobCause
from mica.jobs.services import job_run_enqueue


class Command(JobCommand):
    help = "Rerun the publication gate over every cell."
    job_name = "the gate rerun"

    def queue(self):
        return job_run_enqueue(task=gate_recompute, cause=JobCause.COMMAND)

    def run_here(self):
        return f"Gate rerun over {gate_recompute_all(progress=self.progress)} cells."
