from django.core.management.base import CommandError

from mica.errors import DomainError
from mica.exports.publish import exports_build_and_publish
from mica.exports.services import exports_request_regeneration
from mica.jobs.commands import JobCommand


class Command(JobCommand):
    help = "Regenerate, check and publish every export of the current edition."

    def handle(self, *args, sync=False, **options):
        if not sync:
            job_run = exports_request_regeneration()
            self.stdout.write(f"Queued export regeneration as job run {job_run.pk}.")
            return
        try:
            manifest = exports_build_and_publish(progress=self.progress)
        except DomainError as refused:
            raise CommandError(f"Nothing was published: {refused.message}") from refused
        for entry in manifest["files"]:
            self.stdout.write(f"{entry['sha256']}  {entry['size']:>10}  {entry['name']}")
        self.stdout.write(self.style.SUCCESS(f"Published to {manifest['edition']['slug']}."))
