from django.contrib import admin, messages
from django.db import transaction
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from mica.jobs.models import BeatLease, JobCause, JobRun, WorkerHeartbeat
from mica.jobs.registry import on_demand_jobs
from mica.jobs.selectors import job_title
from mica.jobs.services import job_run_enqueue

# Characters of a run's message or error its row shows.
LIST_TEXT_CHARS = 60


class JobFilter(admin.SimpleListFilter):
    """Jobs by their names in words, not by their tasks' Python paths."""

    title = _("job")
    parameter_name = "job_name"

    def lookups(self, request, model_admin):
        names = JobRun.objects.order_by().values_list("job_name", flat=True).distinct()
        return sorted(((name, job_title(name)) for name in names), key=lambda pair: str(pair[1]))

    def queryset(self, request, queryset):
        return queryset.filter(job_name=self.value()) if self.value() else queryset


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    list_display = (
        "job",
        "started_by",
        "state",
        "progress_bar",
        "message_short",
        "attempts",
        "last_error",
        "queued_at",
        "finished_at",
    )
    # The runs a person started apart from the many content changes start on their own.
    list_filter = ("cause", "state", JobFilter)
    search_fields = ("job_name", "message_en", "message_ko")
    list_select_related = ("requested_by",)
    fields = (
        "job",
        "started_by",
        "state",
        "progress_bar",
        "message",
        "queued_at",
        "due_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "attempts",
        "worker",
        "retry_of",
        "requested_by",
        "arguments",
        "error",
    )
    readonly_fields = fields
    change_list_template = "admin/jobs/jobrun/change_list.html"

    class Media:
        # Redraws the runs while any is queued or running (static/mica/job-progress.js).
        js = ("mica/job-progress.js",)

    @admin.display(description=_("job"), ordering="job_name")
    def job(self, obj):
        return job_title(obj.job_name)

    @admin.display(description=_("progress"), ordering="progress")
    def progress_bar(self, obj):
        # The state rides on the bar, so the page knows to keep redrawing while it runs.
        return format_html(
            '<progress max="100" value="{0}" aria-label="{1}" data-job-state="{2}">{0}%'
            "</progress> {0}%",
            obj.progress,
            _("Progress of %(job)s") % {"job": obj},
            obj.state,
        )

    @admin.display(description=_("started by"), ordering="cause")
    def started_by(self, obj):
        if obj.cause == JobCause.PERSON and obj.requested_by:
            return obj.requested_by.get_username()
        return obj.get_cause_display()

    @admin.display(description=_("message"))
    def message_short(self, obj):
        # The list fits a 1366 px screen; the whole message is on the run's page.
        return Truncator(str(obj.message)).chars(LIST_TEXT_CHARS)

    @admin.display(description=_("last error"))
    def last_error(self, obj):
        # The traceback's last line names the failure; the whole one is on the run's page.
        lines = obj.error.strip().splitlines()
        return Truncator(lines[-1]).chars(LIST_TEXT_CHARS) if lines else ""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_urls(self):
        start_view = self.admin_site.admin_view(require_POST(self.start_job_view))
        return [
            path("start/<slug:job_key>/", start_view, name="jobs_jobrun_start"),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        jobs = [(key, label) for key, (_task, label) in on_demand_jobs().items()]
        return super().changelist_view(request, {**(extra_context or {}), "on_demand_jobs": jobs})

    def start_job_view(self, request, job_key):
        job = on_demand_jobs().get(job_key)
        if job is None:
            messages.error(request, _("There is no such job."))
        elif not request.user.is_superuser:
            messages.error(request, _("Only a superuser can start this job."))
        else:
            with transaction.atomic():
                # On demand, a job that may take only what changed does all of it (a
                # bake renders every page, a regeneration writes every file).
                job_run = job_run_enqueue(task=job[0], arguments={"full": True}, actor=request.user)
            messages.success(
                request, _("%(label)s: queued as run %(id)d.") % {"label": job[1], "id": job_run.pk}
            )
        return redirect(reverse("admin:jobs_jobrun_changelist"))


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(admin.ModelAdmin):
    list_display = ("hostname", "seen_at")
    readonly_fields = ("hostname", "seen_at")

    def has_add_permission(self, request):
        return False


@admin.register(BeatLease)
class BeatLeaseAdmin(admin.ModelAdmin):
    """Which beat sends the schedule (mica.jobs.beat); deleting the row lets any take it."""

    list_display = ("name", "holder", "acquired_at", "expires_at")
    readonly_fields = ("name", "holder", "acquired_at", "expires_at")

    def has_add_permission(self, request):
        return False
