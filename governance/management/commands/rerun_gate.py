from governance.gate import gate_recompute_all
from governance.tasks import gate_recompute
from mica.jobs.commands import JobCommand
from mica.jobs.services import job_run_enqueue


class Command(JobCommand):
    help = "Rerun the publication gate over every cell."

    def handle(self, *args, sync=False, **options):
        if not sync:
            job_run = job_run_enqueue(task=gate_recompute)
            self.stdout.write(f"Queued the gate rerun as job run {job_run.pk}.")
            return
        cells = gate_recompute_all(progress=self.progress)
        self.stdout.write(self.style.SUCCESS(f"Gate rerun over {cells} cells."))
