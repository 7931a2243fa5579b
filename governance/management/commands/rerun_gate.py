from django.core.management.base import BaseCommand

from governance.gate import gate_recompute_all
from governance.tasks import gate_recompute
from mica.jobs.services import job_run_enqueue


class Command(BaseCommand):
    help = "Rerun the publication gate over every cell."

    def add_arguments(self, parser):
        parser.add_argument(
            "--sync", action="store_true", help="Run here and now instead of queueing a job."
        )

    def handle(self, *args, sync=False, **options):
        if not sync:
            job_run = job_run_enqueue(task=gate_recompute)
            self.stdout.write(f"Queued the gate rerun as job run {job_run.pk}.")
            return

        def progress(percent, message=""):
            self.stdout.write(f"[{percent:3d}%] {message}")

        cells = gate_recompute_all(progress=progress)
        self.stdout.write(self.style.SUCCESS(f"Gate rerun over {cells} cells."))
