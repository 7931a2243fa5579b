from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SiteConfig(AppConfig):
    name = "mica.site"
    label = "site"
    verbose_name = _("Site")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.content.changes import content_committed, content_committed_failed
        from mica.jobs.registry import on_demand_job_register
        from mica.site.health import after_commit_failure_record
        from mica.site.tasks import content_reload, pages_bake_run, pages_follow_content

        content_committed.connect(pages_follow_content, dispatch_uid="pages-follow-content")
        content_committed_failed.connect(
            after_commit_failure_record, dispatch_uid="after-commit-failure-record"
        )
        on_demand_job_register(
            "reload-content", task=content_reload, label=_("Reload canonical content")
        )
        on_demand_job_register("bake-pages", task=pages_bake_run, label=_("Bake the public pages"))
