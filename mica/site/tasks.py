import logging

from celery import shared_task
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from mica.content.loading import content_load
from mica.jobs.models import JobCause
from mica.jobs.services import job_request_debounced, job_run_enqueue, job_run_execute
from mica.site import lockouts
from mica.site.bake import pages_bake
from mica.text import lazy_format

logger = logging.getLogger(__name__)


def _reload(arguments, progress):
    reports = content_load(sections=arguments.get("sections"), progress=progress)
    return "; ".join(reports)


@shared_task(bind=True, name="mica.site.tasks.content_reload", title=_("Canonical content reload"))
def content_reload(self, job_run_id):
    """Reload the canonical content from the YAML shipped with this release."""
    job_run_execute(job_run_id, _reload, worker=self.request.hostname or "eager")


def _bake(job_run_id, progress, *, full=False):
    manifest = pages_bake(job_run_id=job_run_id, full=full, progress=progress)
    return lazy_format(
        _(
            "Baked %(count)d pages, %(rendered)d of them rendered and the rest unchanged "
            "since the last bake; %(live)d are rendered live."
        ),
        count=len(manifest["pages"]),
        rendered=manifest["rendered"],
        live=len(manifest["live"]),
    )


@shared_task(bind=True, name="mica.site.tasks.pages_bake_run", max_retries=3, title=_("Page bake"))
def pages_bake_run(self, job_run_id):
    """Render, check and publish every anonymous public page as files."""
    job_run_execute(
        job_run_id,
        lambda arguments, progress: _bake(job_run_id, progress, full=arguments.get("full", False)),
        worker=self.request.hostname or "eager",
        retry_task=self,
    )


@shared_task(name="mica.site.tasks.daily_bake", ignore_result=True, title=_("Daily page bake"))
def daily_bake():
    """What beat sends just after midnight: a bake holds for the day it was made on, as
    some pages show how old a statement is. A full one: every page rendered afresh."""
    job_run_enqueue(task=pages_bake_run, arguments={"full": True}, cause=JobCause.SCHEDULE)


def pages_follow_content(sender, **kwargs):
    """Committed content changes bake the pages again where a worker runs the job."""
    if settings.PAGE_BAKE_ON_CHANGE:
        job_request_debounced(pages_bake_run, settings.PAGE_BAKE_DEBOUNCE_SECONDS)


@shared_task(
    name="mica.site.tasks.sign_in_records_prune",
    ignore_result=True,
    acks_late=False,
    title=_("Pruning of old sign-in records"),
)
def sign_in_records_prune():
    """What beat sends every hour: the sign-in records (lockouts, failures, sign-ins)
    stay bounded, whatever a flood of guesses writes."""
    logger.info("sign-in records pruned: %s", lockouts.sign_in_records_prune())
