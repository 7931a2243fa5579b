from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class ContentConfig(AppConfig):
    name = "mica.content"
    label = "content"
    verbose_name = _("Content")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica import signing  # noqa: F401 - registers the signing key's checks
        from mica.content import builds, changes  # noqa: F401 - builds registers its check
        from mica.content.publication_log import publication_log_after_migrate

        changes.connect()
        # SQLite drops a table's triggers when a migration rebuilds the table.
        post_migrate.connect(
            publication_log_after_migrate, sender=self, dispatch_uid="publication-log-triggers"
        )
