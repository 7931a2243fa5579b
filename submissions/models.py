from contextlib import contextmanager

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, models
from django.db.models import BooleanField, Exists, Expression, OuterRef, Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, pgettext_lazy

from markets.models import OutageState, PlatformOutage, RepresentativePlatform
from mica import scoring
from mica.errors import AppendOnly
from mica.vocabulary import EvidenceType, label_for
from mica.workflows import DecisionEvent, decision_label
from submissions.append_only import PART_REFUSED


class Track(models.TextChoices):
    SIMULATOR = "simulator", _("Simulator")
    LIVE_SHADOW = "live-shadow", _("Live shadow")
    VERIFIED_LIVE = "verified-live", _("Limited verified live")


class Verification(models.TextChoices):
    INDEPENDENT_RERUN = "independent-rerun", _("Independent rerun")
    PROVISIONAL = "provisional", _("Provisional")
    SELF_REPORTED = "self-reported", _("Self-reported")


class DataStatus(models.TextChoices):
    """Whether records are illustrations or measurements. The code "official" is the
    method's vocabulary for measured data; it says nothing of publication, so its label
    is "Measured": only an independent rerun in a cell that passed the gate is called
    official (governance.models.Standing)."""

    DEMO = "demo", _("Demo")
    PREVIEW = "preview", _("Preview")
    OFFICIAL = "official", _("Measured")


class System(models.Model):
    """A consumer-agent system an operator submits; it is measured through its snapshots."""

    # Chosen once, at acceptance, from the name and numbered on collision
    # (submissions.system_submissions): the record is the identity, never the name.
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120)
    operator = models.CharField(_("operator"), max_length=120)
    operator_account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="systems",
        verbose_name=_("operator account"),
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("system")
        verbose_name_plural = _("systems")

    def __str__(self):
        return self.name


class SnapshotQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if (
            set(kwargs) & set(SystemSnapshot.SCORED)
            and self.filter(attempts__isnull=False).exists()
        ):
            raise ValidationError(SystemSnapshot.refused_change)
        return super().update(**kwargs)


class SystemSnapshot(models.Model):
    """A system frozen at a version: any change is a new snapshot, never an edit."""

    # Scoring reads these: once an attempt names the snapshot they never change, or its
    # figures would move with no new record (the database refuses it too:
    # submissions.append_only).
    SCORED = ("routable_models", "data_status")
    refused_change = _(
        "Attempts name this snapshot: its routable models and data status are frozen. "
        "A changed system is a new snapshot."
    )

    system = models.ForeignKey(
        System, on_delete=models.PROTECT, related_name="snapshots", verbose_name=_("system")
    )
    version = models.CharField(_("version"), max_length=60)
    snapshot_date = models.DateField(_("snapshot date"))
    orchestrator = models.CharField(_("orchestrator"), max_length=200)
    routable_models = models.JSONField(
        _("routable models"),
        default=list,
        help_text=_("provider/model identifiers it may route to"),
    )
    tools = models.JSONField(_("tools and APIs"), default=list)
    memory = models.TextField(_("memory behaviour"))
    market_capability = models.JSONField(
        _("declared market execution capability"), default=dict, blank=True
    )
    track = models.CharField(_("track"), max_length=16, choices=Track.choices)
    data_status = models.CharField(_("data status"), max_length=10, choices=DataStatus.choices)
    created_at = models.DateTimeField(_("registered"), auto_now_add=True)

    objects = SnapshotQuerySet.as_manager()

    class Meta:
        ordering = ["system__name", "-snapshot_date"]
        verbose_name = _("system snapshot")
        verbose_name_plural = _("system snapshots")
        constraints = [
            models.UniqueConstraint(fields=["system", "version"], name="one_snapshot_per_version"),
        ]

    def __str__(self):
        return f"{self.system.name} {self.version}"

    def save(self, *args, **kwargs):
        if self.scored_changes():
            raise ValidationError(self.refused_change)
        super().save(*args, **kwargs)

    def clean(self):
        super().clean()
        if changed := self.scored_changes():
            raise ValidationError({field: self.refused_change for field in changed})

    def scored_changes(self):
        """The frozen fields this unsaved edit would change, if attempts name the snapshot."""
        if self._state.adding:
            return []
        stored = type(self).objects.filter(pk=self.pk, attempts__isnull=False)
        stored = stored.values(*self.SCORED).first()
        if stored is None:
            return []
        return [field for field in self.SCORED if getattr(self, field) != stored[field]]


class AttemptClass(models.TextChoices):
    SYNTHETIC_FIXTURE = "synthetic-fixture", _("Synthetic fixture")
    VALIDATED_LOCALIZED = "validated-localized", _("Validated localized")


class InvalidReason(models.TextChoices):
    """Why a kept attempt is never scored, as submissions.ingest records it."""

    UNDECLARED_MODEL = "undeclared-model", _("it called a model the snapshot does not declare")
    UNDECLARED_TOOL = "undeclared-tool", _("it used a tool the snapshot does not declare")


class Outcome(models.TextChoices):
    """The five diagnostic outcomes (seed: "Every attempt is classified as confirmed success,
    unverified completion, partial progress, recoverable failure or critical failure")."""

    CONFIRMED_SUCCESS = "confirmed-success", _("Confirmed success")
    UNVERIFIED_COMPLETION = "unverified-completion", _("Unverified completion")
    PARTIAL_PROGRESS = "partial-progress", _("Partial progress")
    RECOVERABLE_FAILURE = "recoverable-failure", _("Recoverable failure")
    CRITICAL_FAILURE = "critical-failure", _("Critical failure")


def _platforms_above_not_down():
    """The platforms ranked above an attempt's in its registration that no accepted outage
    covers on the attempt's platform snapshot date."""
    outage = PlatformOutage.objects.filter(
        platform=OuterRef("pk"),
        state=OutageState.ACCEPTED,
        first_day__lte=OuterRef(OuterRef("platform_snapshot_date")),
        last_day__gte=OuterRef(OuterRef("platform_snapshot_date")),
    )
    return RepresentativePlatform.objects.filter(
        ~Exists(outage),
        registration=OuterRef("representative_platform__registration"),
        rank__lt=OuterRef("representative_platform__rank"),
    )


class LazyCondition(Expression):
    """A condition built when a query uses it, not when this module is imported: a
    subquery needs every model loaded, which the app registry has not done yet then."""

    conditional = True

    def __init__(self, build):
        super().__init__(output_field=BooleanField())
        self.build = build

    def resolve_expression(self, *args, **kwargs):
        return self.build().resolve_expression(*args, **kwargs)


def _invalidation_in_force():
    return Exists(AttemptInvalidation.objects.filter(attempt=OuterRef("pk"), reversal__isnull=True))


# Invalidated by a decision that no later decision reversed (InvalidationReversal):
# invalidations and reversals alternate, any number of times, and the latest is in force
# (submissions.invalidation), so the attempt is invalidated while one invalidation stands
# unreversed.
INVALIDATED = Q(LazyCondition(_invalidation_in_force))


def _fallback_justified():
    return Q(fallback_invoked=False) | Q(
        ~Exists(_platforms_above_not_down()), representative_platform__isnull=False
    )


# Seed: "A fallback is used only for a documented platform outage, never because it is
# easier for one system." A run on a pre-registered fallback counts while every platform
# ranked above it has an outage that staff accepted (markets.workflows), covering the day
# the run saw its platform; a later acceptance makes it count from then on.
FALLBACK_JUSTIFIED = Q(LazyCondition(_fallback_justified))
# Eligible, valid, not invalidated and not on an undocumented fallback: the attempts
# every figure is counted from.
COUNTED = Q(eligible=True, invalid_reason="") & ~INVALIDATED & FALLBACK_JUSTIFIED


class AppendOnlyQuerySet(models.QuerySet):
    """The record is the evidence a figure is walked back to (seed: "A figure that cannot
    be walked back along this chain is not published"), so no query rewrites or removes
    it; the database's triggers refuse the same (submissions.append_only)."""

    def delete(self):
        raise AppendOnly(self.model.refused_deletion)

    def update(self, **kwargs):
        raise AppendOnly(self.model.refused_change)


class AppendOnlyRecord(models.Model):
    """A row of the record: written once, never saved again nor deleted."""

    refused_change = ""
    refused_deletion = ""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnly(self.refused_change)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly(self.refused_deletion)


class Attempt(AppendOnlyRecord):
    """One run of one task version in one market by one snapshot, with its whole record."""

    refused_change = _("Attempts are append-only: invalidate an attempt, never edit it.")
    refused_deletion = _("Attempts are append-only: invalidate an attempt, never delete it.")

    # Unique within its snapshot (one_attempt_id_per_snapshot), so operators' ids never meet.
    attempt_id = models.CharField(_("attempt id"), max_length=64)
    payload_hash = models.CharField(_("payload hash"), max_length=64, editable=False)
    snapshot = models.ForeignKey(
        SystemSnapshot,
        on_delete=models.PROTECT,
        related_name="attempts",
        verbose_name=_("snapshot"),
    )
    task_version = models.ForeignKey(
        "catalogue.TaskVersion",
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("task version"),
    )
    market = models.ForeignKey(
        "markets.Market", on_delete=models.PROTECT, related_name="+", verbose_name=_("market")
    )
    # Denormalized from the task version, so cells group in SQL without a join chain.
    family = models.ForeignKey(
        "catalogue.TaskFamily", on_delete=models.PROTECT, related_name="+", verbose_name=_("family")
    )
    situations = models.ManyToManyField(
        "markets.IntegrationSituation",
        blank=True,
        related_name="attempts",
        verbose_name=_("integration situations"),
    )
    attempt_class = models.CharField(
        _("attempt class"),
        max_length=24,
        choices=AttemptClass.choices,
        default=AttemptClass.SYNTHETIC_FIXTURE,
    )
    verification = models.CharField(_("verification"), max_length=20, choices=Verification.choices)
    eligible = models.BooleanField(_("eligible"), default=True)
    ineligible_reason = models.CharField(_("why ineligible"), max_length=300, blank=True)
    invalid_reason = models.CharField(
        _("why invalid"),
        max_length=300,
        blank=True,
        help_text=_("An undeclared model or tool: the run is kept and never scored."),
    )
    outcome = models.CharField(_("outcome"), max_length=28, choices=Outcome.choices)
    # Both fail the attempt while keeping it in the denominator (seed: "A duplicate created
    # by a retry is a failure of the attempt, not a second chance at it").
    retry_created_duplicate = models.BooleanField(_("retry created a duplicate"), default=False)
    prohibited_state_violation = models.BooleanField(_("prohibited state violated"), default=False)
    wall_clock_seconds = models.FloatField(_("wall-clock seconds"))
    model_cost_usd = models.DecimalField(_("model cost (USD)"), max_digits=14, decimal_places=9)
    tool_cost_usd = models.DecimalField(
        _("tool and API cost (USD)"), max_digits=14, decimal_places=9, default=0
    )
    observed_cost_usd = models.DecimalField(
        _("observed cost (USD)"), max_digits=14, decimal_places=9
    )
    critical_safety_event = models.BooleanField(_("critical safety event"), default=False)
    safety_event_description = models.TextField(_("safety event"), blank=True)
    platform = models.CharField(_("platform used"), max_length=120, blank=True)
    # The pre-registered platform the name resolved to at ingestion: its registration is
    # the selection evidence, its rank says whether it was a fallback (seed: "Every
    # published run cell names the platform actually used ... the selection evidence").
    representative_platform = models.ForeignKey(
        "markets.RepresentativePlatform",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="attempts",
        verbose_name=_("pre-registered platform"),
    )
    platform_version = models.CharField(_("platform version"), max_length=60, blank=True)
    platform_snapshot_date = models.DateField(_("platform snapshot date"), null=True, blank=True)
    fallback_invoked = models.BooleanField(_("pre-registered fallback invoked"), default=False)
    # Seed: "memory declared but not exercised is recorded as such". None: not stated,
    # which is never read as "not exercised".
    memory_exercised = models.BooleanField(_("declared memory exercised"), null=True)
    # Seed: "Commerce results report proximity to the lowest valid total": the attempt's
    # all-in total and the lowest valid total the reference search observed for it, in
    # the market's currency, with the time and the evidence of that search. An
    # observation made at run time belongs to the attempt's evidence: prices move, so a
    # total fixed on the task version would be stale by the next run.
    commerce_currency = models.CharField(_("commerce currency"), max_length=3, blank=True)
    chosen_total = models.DecimalField(
        _("chosen all-in total"), max_digits=18, decimal_places=4, null=True, blank=True
    )
    reference_total = models.DecimalField(
        _("lowest valid total found by the reference search"),
        max_digits=18,
        decimal_places=4,
        null=True,
        blank=True,
    )
    reference_observed_at = models.DateTimeField(
        _("reference search observed at"), null=True, blank=True
    )
    reference_evidence_id = models.CharField(
        _("reference search evidence"), max_length=64, blank=True
    )
    tools_used = models.JSONField(_("tools used"), default=list, blank=True)
    redacted_trace_id = models.CharField(_("redacted trace id"), max_length=64)
    data_status = models.CharField(_("data status"), max_length=10, choices=DataStatus.choices)
    recorded_at = models.DateTimeField(_("recorded"), auto_now_add=True)

    class Meta:
        ordering = ["-recorded_at", "pk"]
        verbose_name = _("attempt")
        verbose_name_plural = _("attempts")
        indexes = [models.Index(fields=["snapshot", "market", "family"], name="attempt_cell")]
        # Verification classes a person may record (submissions.ingest.RECORDING_PERMISSIONS).
        permissions = [
            ("record_independent_rerun", _("Can record independent reruns on any snapshot")),
            ("record_provisional", _("Can record provisional attempts on any snapshot")),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["snapshot", "attempt_id"], name="one_attempt_id_per_snapshot"
            ),
            models.CheckConstraint(
                name="ineligible_needs_a_reason",
                condition=Q(eligible=True) | ~Q(ineligible_reason=""),
            ),
            models.CheckConstraint(
                name="attempt_costs_not_negative",
                condition=Q(model_cost_usd__gte=0, tool_cost_usd__gte=0, observed_cost_usd__gte=0),
            ),
            models.CheckConstraint(
                name="wall_clock_positive", condition=Q(wall_clock_seconds__gt=0)
            ),
            # A commerce result is whole or absent: never a total without its reference.
            models.CheckConstraint(
                name="commerce_totals_whole_or_absent",
                condition=Q(
                    commerce_currency="",
                    chosen_total__isnull=True,
                    reference_total__isnull=True,
                    reference_observed_at__isnull=True,
                    reference_evidence_id="",
                )
                | (
                    ~Q(commerce_currency="")
                    & Q(
                        chosen_total__gt=0,
                        reference_total__gt=0,
                        reference_observed_at__isnull=False,
                    )
                    & ~Q(reference_evidence_id="")
                ),
            ),
        ]

    def __str__(self):
        return self.attempt_id

    @property
    def invalid_reason_label(self):
        return label_for(InvalidReason, self.invalid_reason)

    @property
    def price_proximity(self):
        """The chosen total against the lowest valid total, or None without them."""
        if self.chosen_total is None:
            return None
        return scoring.price_proximity(float(self.chosen_total), float(self.reference_total))

    @property
    def invalidation(self):
        """The attempt's latest invalidation, reversed or not (its `reversal`), or None:
        the decision in force. Reads the prefetched `invalidations` when a list has them."""
        decisions = list(self.invalidations.all())
        return max(decisions, key=lambda d: (d.at, d.pk)) if decisions else None

    @property
    def scored_eligible(self):
        """Whether the gate counts this attempt (COUNTED)."""
        return Attempt.objects.filter(COUNTED, pk=self.pk).exists()


class AttemptInvalidation(DecisionEvent, AppendOnlyRecord):
    """The decision that an attempt no longer counts, with the deciding role, the reason and
    the date. Its critical safety event, if any, still blocks the cell (seed: "There is no
    re-run that erases it and no appeal that removes it from the record"). It is never
    edited or deleted: a later decision reverses it (InvalidationReversal), and a decision
    after that may invalidate the attempt again, as a new row: an attempt has any number of
    invalidations, every one but the latest reversed."""

    refused_change = _(
        "An invalidation is a recorded decision: reverse it with a later decision and its "
        "reason, never edit it."
    )
    refused_deletion = _(
        "An invalidation is a recorded decision: reverse it with a later decision and its "
        "reason, never delete it."
    )

    attempt = models.ForeignKey(
        Attempt,
        on_delete=models.PROTECT,
        related_name="invalidations",
        verbose_name=_("attempt"),
    )
    reason = models.TextField(_("reason"))

    class Meta(DecisionEvent.Meta):
        verbose_name = _("attempt invalidation")
        verbose_name_plural = _("attempt invalidations")

    def __str__(self):
        return f"{self.attempt}: {decision_label(self.action)}"


class InvalidationReversal(DecisionEvent, AppendOnlyRecord):
    """The later decision that an invalidation no longer holds, with its reason: the attempt
    counts again, and both decisions stay in the record. It names the one invalidation it
    reverses; a later invalidation of the attempt is a new decision with its own reversal."""

    refused_change = _("A reversal is a recorded decision: it is never edited.")
    refused_deletion = _("A reversal is a recorded decision: it is never deleted.")

    invalidation = models.OneToOneField(
        AttemptInvalidation,
        on_delete=models.PROTECT,
        related_name="reversal",
        verbose_name=_("invalidation"),
    )
    reason = models.TextField(_("reason"))

    class Meta(DecisionEvent.Meta):
        verbose_name = _("invalidation reversal")
        verbose_name_plural = _("invalidation reversals")

    def __str__(self):
        return f"{self.invalidation.attempt}: {decision_label(self.action)}"


class AttemptPartQuerySet(AppendOnlyQuerySet):
    def bulk_create(self, *args, **kwargs):
        with self.model.refused_without_attempt():
            return super().bulk_create(*args, **kwargs)


class AttemptPart(AppendOnlyRecord):
    """A part of an attempt's record (a model invocation, a piece of evidence): added only
    with its attempt, in the transaction that records it. Added later, it would change
    what a recorded attempt says, and the gate reads its evidence."""

    refused_addition = _(
        "Model invocations and evidence are recorded with their attempt, in one "
        "transaction: a recorded attempt is never added to."
    )

    objects = AttemptPartQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        with self.refused_without_attempt():
            super().save(*args, **kwargs)

    @classmethod
    @contextmanager
    def refused_without_attempt(cls):
        """Only the database knows which transaction recorded an attempt: its refusal
        (submissions.append_only) is said here in the method's words, at no extra query."""
        try:
            yield
        except DatabaseError as error:
            if PART_REFUSED in str(error):
                raise AppendOnly(cls.refused_addition) from error
            raise


class ModelInvocation(AttemptPart):
    """One model call of an attempt: part of its record, never edited or deleted."""

    refused_change = _("Model invocations are part of an attempt's record: never edited.")
    refused_deletion = _("Model invocations are part of an attempt's record: never deleted.")

    attempt = models.ForeignKey(
        Attempt, on_delete=models.PROTECT, related_name="invocations", verbose_name=_("attempt")
    )
    order = models.PositiveIntegerField(_("order"))
    provider = models.CharField(_("provider"), max_length=80)
    model = models.CharField(_("model"), max_length=120)
    model_version = models.CharField(_("model version"), max_length=80)
    purpose = models.CharField(_("purpose"), max_length=200)
    input_tokens = models.PositiveIntegerField(_("input tokens"))
    output_tokens = models.PositiveIntegerField(_("output tokens"))
    latency_seconds = models.FloatField(_("latency (s)"))
    cost_usd = models.DecimalField(_("cost (USD)"), max_digits=14, decimal_places=9)

    class Meta:
        ordering = ["attempt", "order"]
        verbose_name = _("model invocation")
        verbose_name_plural = _("model invocations")
        constraints = [
            models.UniqueConstraint(fields=["attempt", "order"], name="invocation_order_unique"),
        ]

    def __str__(self):
        return f"{self.attempt_id} #{self.order}"


class EvidenceRecord(AttemptPart):
    """A piece of an attempt's evidence, named by its hash: never edited or deleted."""

    refused_change = _("Evidence records are part of an attempt's record: never edited.")
    refused_deletion = _("Evidence records are part of an attempt's record: never deleted.")

    attempt = models.ForeignKey(
        Attempt, on_delete=models.PROTECT, related_name="evidence", verbose_name=_("attempt")
    )
    evidence_id = models.CharField(_("evidence id"), max_length=64)
    evidence_type = models.CharField(_("evidence type"), max_length=30)
    sha256 = models.CharField(_("SHA-256"), max_length=64)

    class Meta:
        ordering = ["attempt", "pk"]
        verbose_name = _("evidence record")
        verbose_name_plural = _("evidence records")

    def __str__(self):
        return self.evidence_id

    @property
    def evidence_type_label(self):
        return label_for(EvidenceType, self.evidence_type)


class ChallengeType(models.TextChoices):
    METHOD = "method", pgettext_lazy("challenge type", "Method")
    LOCALITY = "locality", _("Locality")
    SCORING = "scoring", _("Scoring")
    EDITORIAL = "editorial", _("Editorial")
    DISCLOSURE = "disclosure", _("Disclosure")


class ScoringMetric(models.TextChoices):
    """The figures a scoring challenge may recompute (submissions.challenges)."""

    ACCURACY = "accuracy", _("Accuracy")
    COST_PER_SUCCESS = "cost-per-success", _("Cost per success")
    P50_LATENCY = "p50-latency", _("p50 latency")
    P95_LATENCY = "p95-latency", _("p95 latency")


# The precision a page states each figure at, as the results pages state a cell's: accuracy
# (a proportion) to three decimals, seconds to one, USD to four. JSON keeps every digit.
STATED_DECIMALS = {
    ScoringMetric.ACCURACY: 3,
    ScoringMetric.COST_PER_SUCCESS: 4,
    ScoringMetric.P50_LATENCY: 1,
    ScoringMetric.P95_LATENCY: 1,
}


class RecomputeVerdict(models.TextChoices):
    """What the portal's own recompute of a scoring challenge found."""

    REPRODUCED = "reproduced", _("Reproduced")
    DIFFERS = "differs", _("Differs")


class ChallengeState(models.TextChoices):
    RECEIVED = "received", _("Received")
    SCREENED = "screened", _("Screened")
    TRIAGED = "triaged", _("Triaged")
    ACCEPTED = "accepted", _("Accepted and corrected")
    HELD = "held", _("Held for the next edition")
    REJECTED = "rejected", _("Rejected")
    WITHDRAWN = "withdrawn", _("Withdrawn")


# Decided: what an appeal can be filed against.
FINAL_CHALLENGE_STATES = (ChallengeState.ACCEPTED, ChallengeState.HELD, ChallengeState.REJECTED)

PUBLIC_CHALLENGE_STATES = [
    ChallengeState.SCREENED,
    ChallengeState.TRIAGED,
    ChallengeState.ACCEPTED,
    ChallengeState.HELD,
    ChallengeState.REJECTED,
    ChallengeState.WITHDRAWN,
]


class Challenge(models.Model):
    """A section-referenced challenge to the method, with the evidence its type requires."""

    edition = models.ForeignKey(
        "methodology.Edition",
        on_delete=models.PROTECT,
        related_name="challenges",
        verbose_name=_("edition"),
    )
    section_id = models.SlugField(_("section id"), max_length=120)
    challenge_type = models.CharField(_("type"), max_length=12, choices=ChallengeType.choices)
    what_is_wrong = models.TextField(_("what is wrong"))
    proposed_replacement = models.TextField(_("what should replace it"))
    evidence = models.JSONField(_("evidence"), default=dict)
    recompute = models.JSONField(_("recomputed figure"), null=True, blank=True)
    contact_email = models.EmailField(_("contact e-mail"))
    email_confirmed_at = models.DateTimeField(_("e-mail confirmed"), null=True, blank=True)
    public_name = models.CharField(_("public name"), max_length=80, blank=True)
    language = models.CharField(
        _("language"), max_length=2, choices=[("en", "English"), ("ko", "한국어")]
    )
    state = models.CharField(
        _("state"), max_length=12, choices=ChallengeState.choices, default=ChallengeState.RECEIVED
    )
    # An idempotency key is the filer's own: unique per filer (submissions.challenges).
    filer = models.CharField(_("filer"), max_length=64, editable=False)
    idempotency_key = models.CharField(_("idempotency key"), max_length=64)
    received_at = models.DateTimeField(_("received"), auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-pk"]
        verbose_name = _("challenge")
        verbose_name_plural = _("challenges")
        indexes = [models.Index(fields=["edition", "section_id"], name="challenge_section")]
        constraints = [
            models.UniqueConstraint(
                fields=["filer", "idempotency_key"], name="one_challenge_per_filer_key"
            )
        ]

    def __str__(self):
        return f"#{self.pk} {self.section_id}"

    @property
    def public(self):
        return self.state in PUBLIC_CHALLENGE_STATES

    @property
    def recompute_metric_label(self):
        return label_for(ScoringMetric, (self.recompute or {}).get("metric", ""))

    @property
    def recompute_verdict(self):
        """What the portal's recompute found ("reproduced" or "differs"); None before it."""
        if not self.recompute:
            return None
        if self.recompute.get("reproduced"):
            return RecomputeVerdict.REPRODUCED
        return RecomputeVerdict.DIFFERS

    @property
    def recompute_verdict_label(self):
        return label_for(RecomputeVerdict, self.recompute_verdict or "")

    @property
    def recompute_decimals(self):
        """The decimals the recomputed figure is stated at on a page."""
        return STATED_DECIMALS[self.recompute["metric"]]


# The reasons the portal writes itself: stored in English, shown in the reader's language.
FILED_REASON = gettext_noop("Filed through the public intake.")
PORTAL_REASONS = frozenset({FILED_REASON})


class ChallengeEvent(DecisionEvent):
    """Each decision on a challenge (submissions.challenges.CHALLENGE_TRANSITIONS)."""

    challenge = models.ForeignKey(
        Challenge, on_delete=models.CASCADE, related_name="events", verbose_name=_("challenge")
    )
    # A challenge decision always gives its reason: the filer reads it.
    reason = models.TextField(_("reason"))

    class Meta(DecisionEvent.Meta):
        verbose_name = _("challenge event")
        verbose_name_plural = _("challenge events")

    @property
    def to_state_label(self):
        return label_for(ChallengeState, self.to_state)

    @property
    def written_by_portal(self):
        """A reason the portal wrote (translated on display), not a person's words."""
        return self.reason in PORTAL_REASONS


class SubmissionState(models.TextChoices):
    RECEIVED = "received", _("Received")
    ACCEPTED = "accepted", _("Accepted for evaluation")
    DECLINED = "declined", _("Declined")


class SystemSubmission(models.Model):
    """An operator's request to have a declared system snapshot evaluated."""

    name = models.CharField(_("system name"), max_length=120)
    operator = models.CharField(_("operator"), max_length=120)
    version = models.CharField(_("version"), max_length=60)
    snapshot_date = models.DateField(_("snapshot date"))
    orchestrator = models.CharField(_("orchestrator"), max_length=200)
    routable_models = models.JSONField(_("every routable model"), default=list)
    tools = models.JSONField(_("tools and APIs"), default=list)
    memory = models.TextField(_("memory behaviour"))
    markets = models.JSONField(_("markets in scope"), default=list)
    families = models.JSONField(_("task families in scope"), default=list)
    market_capability = models.JSONField(_("market execution capability"), default=dict)
    access = models.TextField(_("access"))
    evidence_plan = models.TextField(_("evidence-trace plan"))
    contact_email = models.EmailField(_("contact e-mail"))
    # The operator's e-mails (the receipt, say) are written in the language they filed in.
    language = models.CharField(
        _("language"), max_length=2, choices=[("en", "English"), ("ko", "한국어")], default="en"
    )
    state = models.CharField(
        _("state"), max_length=10, choices=SubmissionState.choices, default=SubmissionState.RECEIVED
    )
    decision_reason = models.TextField(_("reason"), blank=True)
    snapshot = models.OneToOneField(
        SystemSnapshot,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="submission",
        verbose_name=_("snapshot"),
    )
    received_at = models.DateTimeField(_("received"), auto_now_add=True)

    class Meta:
        ordering = ["-received_at"]
        verbose_name = _("system submission")
        verbose_name_plural = _("system submissions")

    def __str__(self):
        return f"#{self.pk} {self.name} {self.version}"


class SystemSubmissionEvent(DecisionEvent):
    """Each decision on a system submission (system_submissions.SUBMISSION_TRANSITIONS)."""

    submission = models.ForeignKey(
        SystemSubmission,
        on_delete=models.CASCADE,
        related_name="events",
        verbose_name=_("system submission"),
    )

    class Meta(DecisionEvent.Meta):
        verbose_name = _("system submission event")
        verbose_name_plural = _("system submission events")


class OutboxState(models.TextChoices):
    PENDING = "pending", _("Pending")
    SENT = "sent", _("Sent")
    FAILED = "failed", _("Failed")


class OutboxMessage(models.Model):
    """A notification waiting to be mailed; kept, so nothing is lost when mail is down."""

    to = models.EmailField(_("to"))
    subject = models.CharField(_("subject"), max_length=200)
    body = models.TextField(_("body"))
    state = models.CharField(
        _("state"), max_length=8, choices=OutboxState.choices, default=OutboxState.PENDING
    )
    # "attempts" alone names the attempt records (Attempt); this is a count of tries.
    attempts = models.PositiveSmallIntegerField(
        pgettext_lazy("number of tries", "attempts"), default=0
    )
    last_error = models.TextField(_("last error"), blank=True)
    created_at = models.DateTimeField(_("queued"), auto_now_add=True)
    sent_at = models.DateTimeField(_("sent"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("outbox message")
        verbose_name_plural = _("outbox")

    def __str__(self):
        # The subject is in the language it was sent in; the admin shows it marked so.
        return _("Message #%(id)s to %(to)s") % {"id": self.pk, "to": self.to}
