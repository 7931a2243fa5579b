from django.core.management.base import CommandError

from mica.errors import DomainError
from mica.jobs.commands import JobCommand
from mica.jobs.services import job_run_enqueue
from mica.site.bake import bake_current, pages_bake
from mica.site.tasks import pages_bake_run


class Command(JobCommand):
    help = "Bake every anonymous public page of the sitemap, check the bake and publish it."

    def handle(self, *args, sync=False, **options):
        if not sync:
            job_run = job_run_enqueue(task=pages_bake_run)
            self.stdout.write(f"Queued the page bake as job run {job_run.pk}.")
            return
        try:
            manifest = pages_bake(progress=self.progress)
        except DomainError as refused:
            raise CommandError(f"Nothing was published: {refused.message}") from refused
        self.stdout.write(
            self.style.SUCCESS(
                f"Baked {len(manifest['pages'])} pages into {bake_current()}; "
                f"{len(manifest['live'])} are rendered live."
            )
        )
