from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ContentConfig(AppConfig):
    name = "mica.content"
    label = "content"
    verbose_name = _("Content")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.content import builds, changes  # noqa: F401 - builds registers its check

        changes.connect()
