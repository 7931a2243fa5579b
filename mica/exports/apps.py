from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ExportsConfig(AppConfig):
    name = "mica.exports"
    label = "exports"
    verbose_name = _("Exports")

    def ready(self):
        from mica.exports.services import exports_follow_content
        from mica.site.content_changes import content_committed

        content_committed.connect(exports_follow_content, dispatch_uid="exports-follow-content")
