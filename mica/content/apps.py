from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ContentConfig(AppConfig):
    name = "mica.content"
    label = "content"
    verbose_name = _("Content")

    def ready(self):
        from mica.content import changes

        changes.connect()
