from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SiteConfig(AppConfig):
    name = "mica.site"
    label = "site"
    verbose_name = _("Site")

    def ready(self):
        from mica.site import content_changes

        content_changes.connect()
