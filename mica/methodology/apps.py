from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MethodologyConfig(AppConfig):
    name = "mica.methodology"
    label = "methodology"
    verbose_name = _("Methodology")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.methodology import signals  # noqa: F401  (a published edition is frozen)
