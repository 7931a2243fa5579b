from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class JobsConfig(AppConfig):
    name = "mica.jobs"
    label = "jobs"
    verbose_name = _("Background jobs")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.jobs import signals  # noqa: F401  (connects the worker signals)
