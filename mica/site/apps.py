from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SiteConfig(AppConfig):
    name = "mica.site"
    label = "site"
    verbose_name = _("Site")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.jobs.registry import on_demand_job_register
        from mica.site.tasks import content_reload

        on_demand_job_register(
            "reload-content", task=content_reload, label=_("Reload canonical content")
        )
