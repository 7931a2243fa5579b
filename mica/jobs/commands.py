from django.core.management.base import BaseCommand


class JobCommand(BaseCommand):
    """A command that queues a tracked job, or with --sync does the work here, with progress."""

    def add_arguments(self, parser):
        parser.add_argument(
            "--sync", action="store_true", help="Run here and now instead of queueing a job."
        )

    def progress(self, percent, message=""):
        self.stdout.write(f"[{percent:3d}%] {message}")
