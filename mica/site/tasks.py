from celery import shared_task
from django.utils.translation import gettext_lazy as _

from mica.content.loading import content_load
from mica.jobs.services import job_run_execute


def _reload(arguments, progress):
    reports = content_load(sections=arguments.get("sections"), progress=progress)
    return "; ".join(reports)


@shared_task(bind=True, name="mica.site.tasks.content_reload", title=_("Canonical content reload"))
def content_reload(self, job_run_id):
    """Reload the canonical content from the YAML shipped with this release."""
    job_run_execute(job_run_id, _reload, worker=self.request.hostname or "eager")
