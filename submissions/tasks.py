from celery import shared_task
from django.conf import settings
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from mica.jobs.services import job_run_execute
from submissions.challenges import challenge_recompute


@shared_task(
    bind=True, name="submissions.tasks.challenge_recompute", title=_("Scoring challenge recompute")
)
def recompute_scoring_challenge(self, job_run_id):
    """Recompute a scoring challenge's figure from its submitted inputs before triage."""

    def work(arguments, progress):
        result = challenge_recompute(challenge_id=arguments["challenge_id"])
        if result is None:
            return _("Not a scoring challenge.")
        return _("Reproduced.") if result["reproduced"] else _("Differs.")

    job_run_execute(job_run_id, work, worker=self.request.hostname or "eager")


@shared_task(
    name="submissions.tasks.outbox_send",
    title=_("E-mail delivery"),
    autoretry_for=(OSError,),
    retry_backoff=True,
    max_retries=8,
)
def outbox_send(message_id):
    """Mail one outbox message; mail-server errors retry with backoff."""
    # Within the app: the outbox imports this module as it loads.
    from submissions.outbox import outbox_deliver

    outbox_deliver(message_id)


@shared_task(
    name="submissions.tasks.outbox_sweep",
    ignore_result=True,
    acks_late=False,
    title=_("E-mail sweep"),
)
def outbox_sweep():
    """What beat sends every OUTBOX_SWEEP_INTERVAL seconds: the messages still waiting
    (their send refused by a broker that was down, or lost) go to the mail queue again."""
    # Within the app: the outbox imports this module as it loads.
    from submissions.outbox import outbox_sweep as sweep

    sweep()


def challenge_confirmation(challenge):
    """Queue the signed link that confirms the challenger's address."""
    # Within the app: these modules import this one as they load.
    from submissions.challenges import confirmation_token
    from submissions.outbox import notify_challenger

    with translation.override(challenge.language):
        link = settings.SITE_URL + reverse(
            "submissions:challenge-confirm", args=[confirmation_token(challenge)]
        )
        body = translation.gettext(
            "Open this link within seven days to confirm your address; the challenge is "
            "screened only after that:\n\n%(link)s"
        ) % {"link": link}
    notify_challenger(challenge, body, happened="file")
