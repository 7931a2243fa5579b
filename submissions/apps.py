from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = _("Submissions")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.methodology import extensions
        from submissions.selectors import open_challenges, submission_figures

        extensions.live_figures_register(submission_figures)
        extensions.open_challenges_register(open_challenges)
