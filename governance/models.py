from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class GateCell(models.Model):
    """One cell (snapshot × market × family) as the publication gate sees it.

    Derived from the attempt records by governance.gate and never typed in:
    recomputed whenever an attempt of the cell arrives, and by the gate job.
    """

    snapshot = models.ForeignKey(
        "submissions.SystemSnapshot",
        on_delete=models.CASCADE,
        related_name="cells",
        verbose_name=_("snapshot"),
    )
    market = models.ForeignKey(
        "markets.Market", on_delete=models.PROTECT, related_name="+", verbose_name=_("market")
    )
    family = models.ForeignKey(
        "catalogue.TaskFamily", on_delete=models.PROTECT, related_name="+", verbose_name=_("family")
    )
    attempts = models.PositiveIntegerField(_("attempts recorded"), default=0)
    eligible_runs = models.PositiveIntegerField(_("eligible runs"), default=0)
    ineligible_runs = models.PositiveIntegerField(_("ineligible runs"), default=0)
    invalid_runs = models.PositiveIntegerField(_("invalid runs"), default=0)
    successes = models.PositiveIntegerField(_("confirmed successes"), default=0)
    accuracy = models.FloatField(_("accuracy"), null=True)
    accuracy_low = models.FloatField(_("accuracy interval low"), null=True)
    accuracy_high = models.FloatField(_("accuracy interval high"), null=True)
    p50_seconds = models.FloatField(_("p50 latency over successes (s)"), null=True)
    p95_seconds = models.FloatField(_("p95 latency over successes (s)"), null=True)
    eligible_median_seconds = models.FloatField(
        _("median latency over all eligible runs (s)"), null=True
    )
    total_cost_usd = models.DecimalField(
        _("total eligible cost (USD)"), max_digits=18, decimal_places=9, default=0
    )
    cost_per_success_usd = models.FloatField(_("cost per success (USD)"), null=True)
    tasks_attempted = models.PositiveIntegerField(_("tasks attempted"), default=0)
    tasks_defined = models.PositiveIntegerField(_("tasks defined"), default=0)
    coverage = models.FloatField(_("task coverage"), null=True)
    critical_safety_events = models.PositiveIntegerField(_("critical safety events"), default=0)
    task_scores = models.JSONField(_("per-task audit values"), default=dict)
    verification = models.CharField(_("verification"), max_length=20)
    data_status = models.CharField(_("data status"), max_length=10)
    blockers = models.JSONField(_("blockers"), default=list)
    publication_eligible = models.BooleanField(_("publication eligible"), default=False)
    computed_at = models.DateTimeField(_("computed"), auto_now=True)

    class Meta:
        ordering = ["snapshot", "market__display_order", "family__position"]
        verbose_name = _("gate cell")
        verbose_name_plural = _("gate cells")
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "market", "family"], name="one_cell"),
            # Demo and preview data can never become publication eligible.
            models.CheckConstraint(
                name="demo_and_preview_never_eligible",
                condition=Q(publication_eligible=False) | Q(data_status="official"),
            ),
            models.CheckConstraint(
                name="eligible_only_without_blockers",
                condition=Q(publication_eligible=False) | Q(blockers=[]),
            ),
        ]

    def __str__(self):
        return self.cell_id

    @property
    def cell_id(self):
        return (
            f"{self.snapshot.system.slug}--{self.snapshot.version}--"
            f"{self.market.code.lower()}--{self.family.slug}"
        )


class Correction(models.Model):
    """An accepted correction, shown wherever its claim is shown, as prominently."""

    edition = models.ForeignKey(
        "methodology.Edition",
        on_delete=models.PROTECT,
        related_name="corrections",
        verbose_name=_("edition"),
    )
    section_id = models.SlugField(_("section id"), max_length=120)
    challenge = models.OneToOneField(
        "submissions.Challenge",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="correction",
        verbose_name=_("challenge"),
    )
    text = models.TextField(_("correction"))
    decided_on = models.DateField(_("decided on"))

    class Meta:
        ordering = ["decided_on", "pk"]
        verbose_name = _("correction")
        verbose_name_plural = _("corrections")

    def __str__(self):
        return f"{self.section_id} · {self.decided_on}"
