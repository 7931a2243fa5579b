from django.contrib import admin, messages
from django.db import transaction
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from mica.jobs.models import JobRun, WorkerHeartbeat
from mica.jobs.services import job_run_enqueue
from mica.site.tasks import content_reload


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = ("job_name", "state", "progress_bar", "message", "queued_at", "finished_at")
    list_filter = ("state", "job_name")
    search_fields = ("job_name", "message")
    list_select_related = ("requested_by",)
    readonly_fields = [f.name for f in JobRun._meta.fields]
    change_list_template = "admin/jobs/jobrun/change_list.html"

    @admin.display(description=_("progress"), ordering="progress")
    def progress_bar(self, obj):
        return format_html(
            '<progress max="100" value="{0}" aria-label="{1}">{0}%</progress> {0}%',
            obj.progress,
            _("Progress of %(job)s") % {"job": obj},
        )

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_urls(self):
        reload_view = self.admin_site.admin_view(require_POST(self.reload_content_view))
        return [
            path("reload-content/", reload_view, name="jobs_jobrun_reload_content"),
            *super().get_urls(),
        ]

    def reload_content_view(self, request):
        if not request.user.is_superuser:
            messages.error(request, _("Only a superuser can reload the canonical content."))
        else:
            with transaction.atomic():
                job_run = job_run_enqueue(task=content_reload, actor=request.user)
            messages.success(request, _("Content reload queued as %(job)s.") % {"job": job_run})
        return redirect(reverse("admin:jobs_jobrun_changelist"))


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ("hostname", "seen_at")
    readonly_fields = ("hostname", "seen_at")

    def has_add_permission(self, request):
        return False
