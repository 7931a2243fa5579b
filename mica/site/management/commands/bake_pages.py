from mica.jobs.commands import JobCommand
from mica.jobs.models import JobCause
from mica.jobs.services import job_run_enqueue
from mica.site.bake import bake_current, pages_bake
from mica.site.tasks import pages_bake_run


class Command(JobCommand):
    help = (
        "Bake every anonymous public page of the sitemap, check the bake and publish it; "
        "pages unchanged since the last bake are kept as they are unless --full."
    )
    job_name = "the page bake"
    full_help = "Render every page, changed or not."

    def queue(self):
        return job_run_enqueue(
            task=pages_bake_run, arguments={"full": self.full}, cause=JobCause.COMMAND
        )

    def run_here(self):
        manifest = pages_bake(full=self.full, progress=self.progress)
        return (
            f"Baked {len(manifest['pages'])} pages into {bake_current()}, "
            f"{manifest['rendered']} of them rendered; {len(manifest['live'])} are rendered live."
        )
