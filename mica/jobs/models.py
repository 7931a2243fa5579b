from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class JobState(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")


class JobCause(models.TextChoices):
    """What started a run: the job list shows the runs a person started apart from the
    many that content changes and the schedule start on their own."""

    PERSON = "person", _("a person")
    CHANGE = "change", _("a content change")
    SCHEDULE = "schedule", _("the schedule")
    COMMAND = "command", _("a command on the server")
    RETRY = "retry", _("a retry")


class JobRun(models.Model):
    """One run of a background job, written by the job as it goes."""

    job_name = models.CharField(_("job"), max_length=120, db_index=True)
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)
    state = models.CharField(
        _("state"), max_length=10, choices=JobState.choices, default=JobState.QUEUED
    )
    progress = models.PositiveSmallIntegerField(_("progress"), default=0)
    cause = models.CharField(
        _("started by"), max_length=10, choices=JobCause.choices, default=JobCause.CHANGE
    )
    message = models.CharField(_("message"), max_length=500, blank=True)
    queued_at = models.DateTimeField(_("queued"), auto_now_add=True)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True)
    # "attempts" alone names the attempt records (submissions.Attempt); this is a count.
    attempts = models.PositiveSmallIntegerField(
        pgettext_lazy("number of tries", "attempts"), default=0
    )
    worker = models.CharField(_("worker"), max_length=255, blank=True)
    # When the run should start: queued_at plus its delay (a debounce, a retry's backoff).
    # A queued run still waiting well after it is taken for lost and sent again.
    due_at = models.DateTimeField(_("due"), null=True, blank=True)
    # The last sign of life of a running run, moved by its reports and by a thread beside
    # the work; a run whose heartbeat stops has lost its worker (services.job_runs_reap).
    heartbeat_at = models.DateTimeField(_("last heartbeat"), null=True, blank=True)
    # The message that started the run: a redelivery of the same message may start it
    # again, another message for it (sent again while it waited) may not.
    delivery = models.CharField(_("delivery"), max_length=255, blank=True)
    retry_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="retries",
        verbose_name=_("retry of"),
    )
    requested_by = models.ForeignKey(
        "auth.User",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        verbose_name=_("requested by"),
    )

    class Meta:
        ordering = ["-queued_at", "-pk"]
        verbose_name = _("job run")
        verbose_name_plural = _("job runs")
        constraints = [
            models.CheckConstraint(
                condition=Q(progress__lte=100), name="jobrun_progress_at_most_100"
            ),
        ]

    def __str__(self):
        # Within the app: the selectors read this module.
        from mica.jobs.selectors import job_title

        return f"{job_title(self.job_name)} #{self.pk}"


class WorkerHeartbeat(models.Model):
    """The last time each worker proved it was alive; /healthz reads the newest."""

    hostname = models.CharField(_("worker"), max_length=255, unique=True)
    seen_at = models.DateTimeField(_("last seen"))

    class Meta:
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self):
        return self.hostname


class BeatLease(models.Model):
    """Which beat may send the schedule, and until when: one beat for the whole system.

    A beat holds the lease while it renews it; another beat, on any machine reaching the
    database, waits until the lease expires or is released (mica.jobs.beat)."""

    name = models.CharField(_("name"), max_length=50, unique=True)
    holder = models.CharField(_("holder"), max_length=255)
    acquired_at = models.DateTimeField(_("acquired"))
    expires_at = models.DateTimeField(_("expires"))

    class Meta:
        verbose_name = _("beat lease")
        verbose_name_plural = _("beat leases")

    def __str__(self):
        return f"{self.name}: {self.holder}"
