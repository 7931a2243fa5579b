from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ExportsConfig(AppConfig):
    name = "mica.exports"
    label = "exports"
    verbose_name = _("Exports")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.content.changes import content_committed
        from mica.exports.services import exports_follow_content
        from mica.exports.tasks import exports_regenerate
        from mica.jobs.registry import on_demand_job_register

        content_committed.connect(exports_follow_content, dispatch_uid="exports-follow-content")
        on_demand_job_register(
            "regenerate-exports", task=exports_regenerate, label=_("Regenerate the exports")
        )
