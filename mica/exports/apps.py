from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ExportsConfig(AppConfig):
    name = "mica.exports"
    label = "exports"
    verbose_name = _("Exports")

    def ready(self):
        from mica.exports import triggers

        triggers.connect()
