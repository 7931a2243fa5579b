from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from mica.scoring import Blocker
from mica.workflows import DecisionEvent, decision_role_label
from submissions.models import DataStatus, Verification

STALE = Blocker.STALE.value


class Standing(models.TextChoices):
    """What a cell's figures are, in the words a reader needs. Seed 000: "Verification.
    Independent rerun only. Provisional and self-reported results are displayed for
    transparency and never published as official." and "Demo and preview data can never
    be publication eligible." "Official" is an independent rerun in a cell that passed
    the gate, and nothing else."""

    OFFICIAL = "official", _("Official: an independent rerun that passed the gate")
    WITHHELD = "withheld", _("Independent rerun, withheld by the gate")
    PROVISIONAL = (
        "provisional",
        _("Provisional: displayed for transparency, never published as official"),
    )
    SELF_REPORTED = (
        "self-reported",
        _("Self-reported: displayed for transparency, never published as official"),
    )
    DEMO = "demo", _("Demo data: never published")
    PREVIEW = "preview", _("Preview data: never published")


def standing_of(*, verification, data_status, eligible):
    """The one rule of the label "Official", for pages, API answers and exports alike."""
    if data_status in (DataStatus.DEMO, DataStatus.PREVIEW):
        return Standing(data_status)
    if verification == Verification.SELF_REPORTED:
        return Standing.SELF_REPORTED
    if verification != Verification.INDEPENDENT_RERUN:
        return Standing.PROVISIONAL
    return Standing.OFFICIAL if eligible else Standing.WITHHELD


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
    discard_rate = models.FloatField(_("ineligible discard rate (%)"), null=True)
    critical_safety_events = models.PositiveIntegerField(_("critical safety events"), default=0)
    task_scores = models.JSONField(_("per-task audit values"), default=dict)
    # governance.aggregates.cell_reliability: agreement of repeats and pass^k over tasks.
    reliability = models.JSONField(_("reliability across repeats"), null=True)
    # governance.aggregates.memory_record: declared memory exercised, not, or not stated.
    memory = models.JSONField(_("memory behaviour recorded"), null=True)
    # The mean accuracy, speed and cost components the sensitivity analysis orders by.
    components = models.JSONField(_("score components"), null=True)
    verification = models.CharField(_("verification"), max_length=20)
    data_status = models.CharField(_("data status"), max_length=10)
    # Seed: "Every published run cell names the platform actually used, its version and
    # snapshot date, the selection evidence, and whether a pre-registered fallback was
    # invoked" (governance.gate._cell_platforms).
    platforms = models.JSONField(_("platforms used"), default=list)
    # Per task version (its id), the names of the platforms used: what access parity
    # compares across a table. Never published: a holdout version's id is not public.
    platform_versions = models.JSONField(_("platforms per task version"), default=dict)
    platform_parity = models.JSONField(_("access parity conflicts"), default=list)
    blockers = models.JSONField(_("blockers"), default=list)
    publication_eligible = models.BooleanField(_("publication eligible"), default=False)
    # governance.gate_inputs: what the cell was computed under besides its own attempts.
    inputs_fingerprint = models.CharField(_("inputs fingerprint"), max_length=64, default="")
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
                condition=Q(publication_eligible=False) | Q(data_status=DataStatus.OFFICIAL),
            ),
            models.CheckConstraint(
                name="eligible_only_without_blockers",
                condition=Q(publication_eligible=False) | Q(blockers=[]),
            ),
        ]

    def __str__(self):
        return self.cell_id

    @property
    def is_fresh(self):
        """Computed under the current inputs; set by governance.selectors.cell_list. A cell
        read any other way has not been checked, so it is not fresh: the gate fails closed."""
        return getattr(self, "fresh", False)

    @property
    def reasons(self):
        """What blocks the cell as a reader must show it: a stale cell is blocked as stale."""
        return self.blockers if self.is_fresh else [STALE]

    @property
    def eligible(self):
        """Publication eligible as of now: computed eligible, under the current inputs."""
        return self.publication_eligible and self.is_fresh

    @property
    def standing(self):
        return standing_of(
            verification=self.verification, data_status=self.data_status, eligible=self.eligible
        )

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


class DisclosureCategory(models.TextChoices):
    OPERATOR = "operator", _("Operator")
    DECISION_RIGHTS = "decision-rights", _("Decision rights")
    FUNDING = "funding", _("Funding and its terms")
    PAID_TASK_AUTHORS = "paid-task-authors", _("Paid task-author relationships")
    VENDOR_RELATIONSHIPS = "vendor-relationships", _("Vendor relationships")
    CONFLICTS = "conflicts-of-interest", _("Conflicts of interest")
    PUBLICATION_PROCESS = "publication-process", _("Publication process")
    CORRECTIONS_AND_APPEALS = "corrections-and-appeals", _("Corrections and appeals")


class DisclosureBasis(models.TextChoices):
    SELF_DECLARED = "self-declared", _("Self-declared")
    VERIFIED = "verified", _("Verified")


class DisclosureStatement(models.Model):
    """One statement of the disclosure register. A change is a new statement that
    supersedes this one; the old one stays public as history."""

    key = models.SlugField(_("key"), max_length=60)
    category = models.CharField(_("category"), max_length=30, choices=DisclosureCategory.choices)
    title = models.CharField(_("title"), max_length=200)
    statement = models.TextField(_("statement"))
    basis = models.CharField(_("basis"), max_length=14, choices=DisclosureBasis.choices)
    confirmed_on = models.DateField(_("last confirmed"))
    confirm_every_days = models.PositiveIntegerField(_("confirm every (days)"), default=180)
    amount_min = models.DecimalField(
        _("amount band from"), max_digits=14, decimal_places=2, null=True, blank=True
    )
    amount_max = models.DecimalField(
        _("amount band to"), max_digits=14, decimal_places=2, null=True, blank=True
    )
    amount_currency = models.CharField(_("currency"), max_length=3, blank=True)
    amount_period = models.CharField(_("period"), max_length=20, blank=True)
    supersedes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="superseded_by",
        verbose_name=_("supersedes"),
    )
    superseded_at = models.DateTimeField(_("superseded"), null=True, blank=True)
    created_at = models.DateTimeField(_("stated"), auto_now_add=True)

    class Meta:
        ordering = ["category", "key", "-created_at"]
        verbose_name = _("disclosure statement")
        verbose_name_plural = _("disclosure register")
        constraints = [
            models.UniqueConstraint(
                fields=["key"],
                condition=Q(superseded_at__isnull=True),
                name="one_current_statement_per_key",
            ),
            models.CheckConstraint(
                name="amount_band_is_complete",
                condition=Q(amount_min__isnull=True, amount_max__isnull=True)
                | Q(
                    amount_min__isnull=False,
                    amount_max__isnull=False,
                    amount_min__lte=models.F("amount_max"),
                ),
            ),
        ]

    def __str__(self):
        return f"{self.key} · {self.created_at:%Y-%m-%d}" if self.created_at else self.key


class DecisionRight(models.Model):
    key = models.SlugField(_("key"), max_length=60, unique=True)
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    right = models.CharField(_("right"), max_length=200)
    holder = models.CharField(_("held by"), max_length=200)
    independently_held = models.BooleanField(_("independently held today"), default=False)
    note = models.TextField(_("note"), blank=True)

    class Meta:
        ordering = ["position"]
        verbose_name = _("decision right")
        verbose_name_plural = _("decision rights")

    def __str__(self):
        return self.key


class Refusal(models.Model):
    key = models.SlugField(_("key"), max_length=60, unique=True)
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    text = models.TextField(_("text"))

    class Meta:
        ordering = ["position"]
        verbose_name = _("refusal")
        verbose_name_plural = _("refusals")

    def __str__(self):
        return self.key


class IndependenceItem(models.Model):
    key = models.SlugField(_("key"), max_length=60, unique=True)
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    title = models.CharField(_("title"), max_length=200)
    detail = models.TextField(_("detail"))
    status = models.CharField(
        _("status"), max_length=10, choices=[("open", _("Open")), ("resolved", _("Resolved"))]
    )

    class Meta:
        ordering = ["position"]
        verbose_name = _("independence item")
        verbose_name_plural = _("independence items")

    def __str__(self):
        return self.key


class RoleDisclosure(models.Model):
    role = models.CharField(
        _("role"),
        max_length=20,
        unique=True,
        choices=[
            ("task-author", _("Task author")),
            ("reviewer", _("Reviewer")),
            ("evaluator", _("Evaluator")),
            ("funder", _("Funder")),
        ],
    )
    relationships = models.TextField(_("relationships to evaluated parties"))
    holdout_access = models.BooleanField(_("holdout access"), default=False)
    conflicts_declared = models.TextField(_("conflicts declared"))

    class Meta:
        ordering = ["role"]
        verbose_name = _("role disclosure")
        verbose_name_plural = _("role disclosures")

    def __str__(self):
        return self.role


class AppealState(models.TextChoices):
    RECEIVED = "received", _("Received")
    UPHELD = "upheld", _("Upheld: the decision is reopened")
    DISMISSED = "dismissed", _("Dismissed: the decision stands")


class Appeal(models.Model):
    """An appeal against a challenge decision, decided by someone other than the decider."""

    challenge = models.ForeignKey(
        "submissions.Challenge",
        on_delete=models.PROTECT,
        related_name="appeals",
        verbose_name=_("challenge"),
    )
    grounds = models.TextField(_("grounds"))
    state = models.CharField(
        _("state"), max_length=10, choices=AppealState.choices, default=AppealState.RECEIVED
    )
    decided_by = models.ForeignKey(
        "auth.User",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_role = models.CharField(_("deciding role"), max_length=20, blank=True)
    reason = models.TextField(_("reason"), blank=True)
    received_at = models.DateTimeField(_("received"), auto_now_add=True)
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        verbose_name = _("appeal")
        verbose_name_plural = _("appeals")

    def __str__(self):
        return _("Appeal #%(appeal)s on challenge #%(challenge)s") % {
            "appeal": self.pk,
            "challenge": self.challenge_id,
        }

    @property
    def decided_role_label(self):
        return decision_role_label(self.decided_role)


class AppealEvent(DecisionEvent):
    """The filing of an appeal and its decision (governance.services.APPEAL_TRANSITIONS)."""

    appeal = models.ForeignKey(
        Appeal, on_delete=models.CASCADE, related_name="events", verbose_name=_("appeal")
    )

    class Meta(DecisionEvent.Meta):
        verbose_name = _("appeal event")
        verbose_name_plural = _("appeal events")


class PersonDeclaration(models.Model):
    """What one person declares (kept private; published only at role level).

    It decides whether they may review: a declared conflict with a system bars approving a
    task that system is evaluated on, and holdout access bars anyone tied to an evaluated
    party from reviewing at all.
    """

    user = models.OneToOneField(
        "auth.User", on_delete=models.CASCADE, related_name="declaration", verbose_name=_("person")
    )
    holdout_access = models.BooleanField(_("holdout access"), default=False)
    affiliated_systems = models.ManyToManyField(
        "submissions.System",
        blank=True,
        related_name="+",
        verbose_name=_("affiliated with these evaluated systems"),
    )
    conflicted_systems = models.ManyToManyField(
        "submissions.System",
        blank=True,
        related_name="+",
        verbose_name=_("declared conflicts with these systems"),
    )
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("person declaration")
        verbose_name_plural = _("person declarations")

    def __str__(self):
        return str(self.user)


class Withdrawal(models.Model):
    """A figure that could not be re-derived: withdrawn, and still shown as withdrawn."""

    edition = models.ForeignKey(
        "methodology.Edition",
        on_delete=models.PROTECT,
        related_name="withdrawals",
        verbose_name=_("edition"),
    )
    figure = models.CharField(_("figure"), max_length=300)
    where = models.CharField(_("where it was shown"), max_length=300)
    original_value = models.CharField(_("original value"), max_length=120)
    corrected_value = models.CharField(_("corrected value"), max_length=120, blank=True)
    reason = models.TextField(_("reason"))
    decided_on = models.DateField(_("decided on"))

    class Meta:
        ordering = ["-decided_on", "-pk"]
        verbose_name = _("withdrawn figure")
        verbose_name_plural = _("withdrawn figures")

    def __str__(self):
        return f"{self.figure} · {self.decided_on}"
