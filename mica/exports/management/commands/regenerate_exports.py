from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError
from mica.exports.publish import exports_regenerate
from mica.exports.services import exports_request_regeneration


class Command(BaseCommand):
    help = "Regenerate, check and publish every export of the current edition."

    def add_arguments(self, parser):
        parser.add_argument(
            "--sync", action="store_true", help="Run here and now instead of queueing a job."
        )

    def handle(self, *args, sync=False, **options):
        if not sync:
            job_run = exports_request_regeneration()
            self.stdout.write(f"Queued export regeneration as job run {job_run.pk}.")
            return

        def progress(percent, message=""):
            self.stdout.write(f"[{percent:3d}%] {message}")

        try:
            manifest = exports_regenerate(progress=progress)
        except DomainError as refused:
            raise CommandError(f"Nothing was published: {refused.message}") from refused
        for entry in manifest["files"]:
            self.stdout.write(f"{entry['sha256']}  {entry['size']:>10}  {entry['name']}")
        self.stdout.write(self.style.SUCCESS(f"Published to {manifest['edition']['slug']}."))
