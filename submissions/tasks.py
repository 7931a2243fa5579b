from celery import shared_task

from mica.jobs.services import job_run_execute
from submissions.challenges import challenge_recompute


@shared_task(bind=True, name="submissions.tasks.challenge_recompute")
def recompute_scoring_challenge(self, job_run_id):
    """Recompute a scoring challenge's figure from its submitted inputs before triage."""

    def work(arguments, progress):
        result = challenge_recompute(challenge_id=arguments["challenge_id"])
        if result is None:
            return "not a scoring challenge"
        return "reproduced" if result["reproduced"] else "differs"

    job_run_execute(job_run_id, work, worker=self.request.hostname or "eager")


@shared_task(
    name="submissions.tasks.send_challenge_confirmation",
    autoretry_for=(OSError,),
    retry_backoff=True,
    max_retries=5,
)
def send_challenge_confirmation(challenge_id):
    """Mail the challenger the signed link that confirms their address (console by default)."""
    from django.conf import settings
    from django.core.mail import send_mail
    from django.urls import reverse
    from django.utils import translation

    from submissions.challenges import confirmation_token
    from submissions.models import Challenge

    challenge = Challenge.objects.get(pk=challenge_id)
    if challenge.email_confirmed_at is not None:
        return
    with translation.override(challenge.language):
        link = settings.SITE_URL + reverse(
            "submissions:challenge-confirm", args=[confirmation_token(challenge)]
        )
        subject = translation.gettext("Confirm your MICA challenge #%(id)s") % {"id": challenge.pk}
        body = translation.gettext(
            "Open this link within seven days to confirm your address; the challenge is "
            "screened only after that:\n\n%(link)s"
        ) % {"link": link}
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [challenge.contact_email])
