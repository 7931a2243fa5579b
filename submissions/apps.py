from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class SubmissionsConfig(AppConfig):
    name = "submissions"
    verbose_name = _("Submissions")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from catalogue.signals import review_moved
        from mica.caches import cache_tables_create
        from mica.methodology import extensions
        from submissions.append_only import record_triggers_after_migrate
        from submissions.outbox import notify_review_move
        from submissions.selectors import open_challenges, submission_figures

        extensions.live_figures_register(submission_figures)
        extensions.open_challenges_register(open_challenges)
        # Whoever can act next on a local review hears of it through the outbox.
        review_moved.connect(notify_review_move, dispatch_uid="review-notifications")
        # The intake limits count in a database cache on the embedded default.
        post_migrate.connect(cache_tables_create, sender=self, dispatch_uid="cache-tables")
        # SQLite drops a table's triggers when a migration rebuilds the table.
        post_migrate.connect(
            record_triggers_after_migrate, sender=self, dispatch_uid="record-triggers"
        )
