from decimal import Decimal

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from mica.errors import InvalidTransition
from mica.workflows import DecisionEvent

SEMVER_VALIDATOR = RegexValidator(r"^\d+\.\d+\.\d+$", _("Use a semantic version such as 1.0.0."))
TASK_SLUG_VALIDATOR = RegexValidator(
    r"^[a-z]+-[a-z0-9]+(?:-[a-z0-9]+)*$", _("Use lower-case words joined by hyphens.")
)


class TaskFamily(models.Model):
    """One of the ten everyday task domains."""

    slug = models.SlugField(_("id"), max_length=60, unique=True)
    position = models.PositiveSmallIntegerField(_("order"), unique=True)
    task_prefix = models.CharField(_("task id prefix"), max_length=8, unique=True)
    label = models.CharField(_("label"), max_length=120)
    summary = models.TextField(_("summary"))
    why_hard = models.TextField(_("why it is hard"))
    timeout_seconds = models.PositiveIntegerField(
        _("timeout (s)"), choices=[(900, "900"), (1200, "1200"), (1800, "1800")]
    )
    final_state_evidence = models.TextField(_("final-state evidence"), blank=True)
    boundary_evidence = models.TextField(_("boundary evidence"), blank=True)

    class Meta:
        ordering = ["position"]
        verbose_name = _("task family")
        verbose_name_plural = _("task families")

    def __str__(self):
        return self.label


class Lifecycle(models.TextChoices):
    CANDIDATE = "candidate", _("Candidate")
    VALIDATED = "validated", _("Validated")
    RETIRED = "retired", _("Retired")


class TaskSet(models.TextChoices):
    PUBLIC = "public", _("Public")
    HOLDOUT = "holdout", _("Holdout")


class TaskDefinition(models.Model):
    """A canonical task: its identity, lifecycle and set. The content lives in versions."""

    slug = models.CharField(_("id"), max_length=60, unique=True, validators=[TASK_SLUG_VALIDATOR])
    family = models.ForeignKey(
        TaskFamily, on_delete=models.PROTECT, related_name="tasks", verbose_name=_("family")
    )
    position = models.PositiveSmallIntegerField(_("order in family"), default=1)
    lifecycle = models.CharField(
        _("lifecycle"), max_length=10, choices=Lifecycle.choices, default=Lifecycle.CANDIDATE
    )
    task_set = models.CharField(
        _("set"), max_length=8, choices=TaskSet.choices, default=TaskSet.PUBLIC
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    created_by_role = models.CharField(_("created by (role)"), max_length=40, default="author")
    source = models.CharField(_("source"), max_length=200, blank=True)
    # Kept by the services whenever a version is added, so lists filter in SQL.
    current_version = models.OneToOneField(
        "TaskVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("current version"),
    )

    class Meta:
        ordering = ["family__position", "position", "slug"]
        verbose_name = _("task definition")
        verbose_name_plural = _("task definitions")
        # With a declaration of holdout access, the one capability that shows holdout
        # tasks anywhere (catalogue.access.holdout_access).
        permissions = [("view_holdout", _("Can see holdout tasks and record attempts on them"))]

    def __str__(self):
        return self.slug


class TaskSurface(models.TextChoices):
    """How a task is reached as a whole (not the integration surfaces of mica.vocabulary)."""

    WEB = "web", _("Web")
    APP_ONLY = "app-only", _("App only")
    IDENTITY_GATED = "identity-gated", _("Identity-gated")
    PHONE_OR_IN_PERSON = "phone-or-in-person", _("Phone or in person")
    MIXED_SURFACE = "mixed-surface", _("Mixed surface")


class TerminationClass(models.TextChoices):
    COMPLETED_FINAL_STATE = "completed-final-state", _("Completed final state")
    APPROVAL_HANDOFF = "approval-handoff", _("Approval handoff")
    REFUSAL = "refusal", _("Refusal")
    ESCALATION = "escalation", _("Escalation")


class Complexity(models.TextChoices):
    SINGLE_STEP = "single-step", _("Single step")
    MULTI_STEP = "multi-step", _("Multi-step")
    CROSS_SESSION = "cross-session", _("Cross-session")


class ReferenceStatus(models.TextChoices):
    CALIBRATION_PENDING = "calibration-pending", _("Calibration pending")
    REGISTERED = "registered", _("Registered")


# Seed: "Speed and cost references are pre-registered per task version and never
# re-derived from the cohort being scored." Once a version is validated they are fixed
# for good: a different reference is a new version.
REFERENCE_FIELDS = (
    "reference_status",
    "reference_method",
    "reference_sample_size",
    "speed_reference_seconds",
    "cost_reference_usd",
)
# The method lead's decisions that validate a version (catalogue.workflows.TASK_TRANSITIONS):
# the task promoted on it, or it made the task's current version.
VALIDATING_ACTIONS = ("promote", "make_current")


def _fixed(value, places):
    """A decimal as its column stores it ("240.00"), whether read back or just typed."""
    return None if value in (None, "") else f"{Decimal(str(value)):.{places}f}"


def references_refused(version):
    return InvalidTransition(
        gettext(
            "%(version)s is validated: its speed and cost references were pre-registered "
            "and no longer change. Register different references on a new version."
        )
        % {"version": version},
        field_errors={
            name: [gettext("Validated: pre-registered and fixed.")] for name in REFERENCE_FIELDS
        },
    )


def version_frozen_refused(version):
    """Why a frozen version's text does not change, and what to do instead."""
    return InvalidTransition(
        gettext(
            "%(version)s is frozen: it was validated or a published edition holds it, so "
            "its text is this version number's for good. Start a new version from it, "
            "and the new version goes through local review."
        )
        % {"version": version}
    )


class TaskVersionQuerySet(models.QuerySet):
    def validated(self):
        """Versions a decision of the method lead validated."""
        decisions = TaskEvent.objects.filter(action__in=VALIDATING_ACTIONS).values("version")
        return self.filter(pk__in=decisions)

    def frozen(self):
        """Versions whose text is fixed for good: validated, or held by a published edition."""
        return self.filter(frozen_at__isnull=False)

    def public(self):
        """Versions a reader may see: the task's current one and every frozen one. A draft,
        a version in review or one turned down appears on no public page, API answer,
        sitemap, search result, feed or export."""
        return self.filter(Q(frozen_at__isnull=False) | Q(definition__current_version=F("pk")))

    def update(self, **values):
        """No update changes a frozen version (the model-level guard of TaskVersion.save,
        for writes that do not go through it); freezing one is the only write left."""
        changing = {name: value for name, value in values.items() if name != "frozen_at"}
        if changing:
            # A frozen row that would hold anything else than it does (the same values
            # written again change nothing, as the database's trigger also judges).
            frozen = self.frozen().exclude(**changing).first()
            if frozen is not None:
                if set(changing) <= set(REFERENCE_FIELDS):
                    raise references_refused(frozen)
                raise version_frozen_refused(frozen)
        return super().update(**values)


def handoff_is_completion(prefix=""):
    """Versions whose contract declares the approval handoff as the completion point."""
    return Q(**{f"{prefix}termination_class": TerminationClass.APPROVAL_HANDOFF})


def idempotency_declared(prefix=""):
    """Versions whose contract declares an idempotency requirement, in either language."""
    return Q(**{f"{prefix}idempotency_en__gt": ""}) | Q(**{f"{prefix}idempotency_ko__gt": ""})


class TaskVersion(models.Model):
    """The content of a task at one semantic version: its contract and design fields."""

    definition = models.ForeignKey(
        TaskDefinition, on_delete=models.CASCADE, related_name="versions", verbose_name=_("task")
    )
    version = models.CharField(_("version"), max_length=20, validators=[SEMVER_VALIDATOR])
    title = models.CharField(_("title"), max_length=200)
    final_state = models.TextField(_("final state"))
    confirmation_boundary = models.TextField(_("confirmation boundary"))
    idempotency = models.TextField(
        _("idempotency requirement"),
        blank=True,
        help_text=_("How a retry must not repeat a non-idempotent action; blank when none."),
    )
    evidence_requirements = models.JSONField(_("evidence requirements"), default=list)
    surface = models.CharField(_("surface"), max_length=20, choices=TaskSurface.choices, blank=True)
    termination_class = models.CharField(
        _("termination class"), max_length=24, choices=TerminationClass.choices, blank=True
    )
    declared_complexity = models.CharField(
        _("declared complexity"), max_length=16, choices=Complexity.choices, blank=True
    )
    diagnostic_axes = models.JSONField(_("diagnostic axes"), default=list, blank=True)
    locality_conditions = models.JSONField(_("locality conditions"), default=list, blank=True)
    parameter_schema = models.JSONField(_("parameter schema"), default=list, blank=True)
    reference_status = models.CharField(
        _("reference status"),
        max_length=20,
        choices=ReferenceStatus.choices,
        default=ReferenceStatus.CALIBRATION_PENDING,
    )
    reference_method = models.CharField(
        _("reference method"), max_length=20, default="pilot-median"
    )
    reference_sample_size = models.PositiveIntegerField(_("reference sample size"), default=0)
    speed_reference_seconds = models.DecimalField(
        _("speed reference (s)"), max_digits=9, decimal_places=2, null=True, blank=True
    )
    cost_reference_usd = models.DecimalField(
        _("cost reference (USD)"), max_digits=9, decimal_places=4, null=True, blank=True
    )
    content_hash = models.CharField(_("content hash"), max_length=64, editable=False)
    # Set once, when the method lead validates the version or an edition that holds it is
    # published; from then on every column is fixed, down to the database (mica.frozen_rows).
    frozen_at = models.DateTimeField(_("frozen"), null=True, blank=True, editable=False)
    editors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="+",
        verbose_name=_("editors of this revision"),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    objects = TaskVersionQuerySet.as_manager()

    class Meta:
        ordering = ["definition", "-created_at", "-pk"]
        verbose_name = _("task version")
        verbose_name_plural = _("task versions")
        constraints = [
            models.UniqueConstraint(fields=["definition", "version"], name="one_row_per_version"),
            models.CheckConstraint(
                name="references_match_status",
                condition=(
                    Q(
                        reference_status="calibration-pending",
                        speed_reference_seconds__isnull=True,
                        cost_reference_usd__isnull=True,
                        reference_sample_size=0,
                    )
                    | Q(
                        reference_status="registered",
                        speed_reference_seconds__gt=0,
                        cost_reference_usd__gt=0,
                        reference_sample_size__gte=1,
                    )
                ),
            ),
        ]

    def __str__(self):
        return f"{self.definition.slug} {self.version}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            self._frozen_guard(kwargs.get("update_fields"))
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self.pk is not None and TaskVersion.objects.frozen().filter(pk=self.pk).exists():
            raise version_frozen_refused(self)
        return super().delete(*args, **kwargs)

    def _frozen_guard(self, update_fields):
        """Refuse a save that would change a frozen version's stored text."""
        fields = [
            f
            for f in self._meta.concrete_fields
            if not f.primary_key and (update_fields is None or f.name in update_fields)
        ]
        stored = (
            TaskVersion.objects.filter(pk=self.pk)
            .values("frozen_at", *(f.attname for f in fields))
            .first()
        )
        if stored is None or stored["frozen_at"] is None:
            return
        changed = {
            f.name
            for f in fields
            if f.to_python(stored[f.attname]) != f.to_python(getattr(self, f.attname))
        }
        if changed and changed <= set(REFERENCE_FIELDS):
            raise references_refused(self)
        if changed:
            raise version_frozen_refused(self)

    @property
    def frozen(self):
        return self.frozen_at is not None

    @property
    def short_hash(self):
        """The content hash as people quote it: its first twelve hex digits."""
        return self.content_hash[:12]

    @property
    def handoff_is_completion(self):
        """Whether a handoff record proves a success here (as `handoff_is_completion()`)."""
        return self.termination_class == TerminationClass.APPROVAL_HANDOFF

    @property
    def declares_idempotency(self):
        """Whether a success here needs an idempotency record (as `idempotency_declared()`)."""
        return bool(self.idempotency_en or self.idempotency_ko)

    def references(self):
        """The pre-registered references as plain values, the same however they were set."""
        return _references({name: getattr(self, name) for name in REFERENCE_FIELDS})

    def validation_event(self):
        """The method lead's first decision that validated this version, or None."""
        if self.pk is None:
            return None
        events = TaskEvent.objects.filter(version_id=self.pk, action__in=VALIDATING_ACTIONS)
        return events.order_by("at", "pk").first()


def _references(values):
    sample = values["reference_sample_size"]
    return {
        "status": values["reference_status"],
        "method": values["reference_method"],
        "sample_size": None if sample in (None, "") else int(sample),
        "speed_seconds": _fixed(values["speed_reference_seconds"], 2),
        "cost_usd": _fixed(values["cost_reference_usd"], 4),
    }


class VersionPart(models.Model):
    """A part of a version's contract (a clause, a market's applicability): added, changed
    or removed only while its version is not frozen."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None:
            stored = type(self).objects.filter(pk=self.pk).values_list("version_id", flat=True)
            for version_id in stored:
                self._refuse_if_frozen(version_id)
        self._refuse_if_frozen(self.version_id)
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self._refuse_if_frozen(self.version_id)
        return super().delete(*args, **kwargs)

    def _refuse_if_frozen(self, version_id):
        if TaskVersion.objects.frozen().filter(pk=version_id).exists():
            raise version_frozen_refused(TaskVersion.objects.get(pk=version_id))


class ClauseKind(models.TextChoices):
    OBLIGATION = "obligation", _("Obligation")
    INVARIANT = "invariant", _("Invariant")
    PROHIBITED = "prohibited", _("Prohibited state")


class ContractClause(VersionPart):
    """One obligation, invariant or prohibited state of a task version's contract."""

    version = models.ForeignKey(
        TaskVersion,
        on_delete=models.CASCADE,
        related_name="clauses",
        verbose_name=_("task version"),
    )
    kind = models.CharField(_("kind"), max_length=12, choices=ClauseKind.choices)
    position = models.PositiveSmallIntegerField(_("order"), default=1)
    text = models.TextField(_("text"))

    class Meta:
        ordering = ["kind", "position", "pk"]
        verbose_name = _("contract clause")
        verbose_name_plural = _("contract clauses")

    def __str__(self):
        return self.text[:60]


class Applicability(models.TextChoices):
    APPLICABLE = "applicable", _("Applicable")
    VARIANT_REQUIRED = "variant-required", _("Variant required")
    NOT_APPLICABLE = "not-applicable", _("Not applicable")


# The rule "a task applies in this market", in one place: its applicability there is
# anything but not applicable (MarketApplicability.applies, selectors.task_applies_in).
APPLYING = (Applicability.APPLICABLE, Applicability.VARIANT_REQUIRED)


class MarketApplicability(VersionPart):
    version = models.ForeignKey(
        TaskVersion,
        on_delete=models.CASCADE,
        related_name="applicability",
        verbose_name=_("task version"),
    )
    market = models.ForeignKey(
        "markets.Market", on_delete=models.PROTECT, related_name="+", verbose_name=_("market")
    )
    status = models.CharField(_("applicability"), max_length=16, choices=Applicability.choices)
    note = models.TextField(_("note"))
    variant = models.TextField(_("localized variant"), blank=True)
    region = models.CharField(_("region assumed"), max_length=200, blank=True)
    channel = models.CharField(_("channel assumed"), max_length=200, blank=True)
    register = models.CharField(_("register assumed"), max_length=200, blank=True)

    class Meta:
        ordering = ["market__display_order"]
        verbose_name = _("market applicability")
        verbose_name_plural = _("market applicability")
        constraints = [
            models.UniqueConstraint(
                fields=["version", "market"], name="one_applicability_per_market"
            ),
        ]

    def __str__(self):
        return f"{self.version} · {self.market_id}"

    @property
    def applies(self):
        return self.status in APPLYING


class ReviewState(models.TextChoices):
    DRAFT = "draft", _("Draft")
    IN_REVIEW = "in-review", _("In review")
    CHANGES_REQUESTED = "changes-requested", _("Changes requested")
    APPROVED = "approved", _("Approved")
    VOIDED = "voided", _("Voided by a later edit")


OPEN_REVIEW_STATES = [ReviewState.DRAFT, ReviewState.IN_REVIEW, ReviewState.CHANGES_REQUESTED]


class LocalReview(models.Model):
    """The local review of one task version in one market, under four-eyes rules."""

    version = models.ForeignKey(
        TaskVersion,
        on_delete=models.CASCADE,
        related_name="reviews",
        verbose_name=_("task version"),
    )
    market = models.ForeignKey(
        "markets.Market", on_delete=models.PROTECT, related_name="+", verbose_name=_("market")
    )
    state = models.CharField(
        _("state"), max_length=20, choices=ReviewState.choices, default=ReviewState.DRAFT
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="authored_reviews",
        verbose_name=_("author"),
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reviews_done",
        verbose_name=_("reviewer"),
    )
    approved_hash = models.CharField(_("approved content hash"), max_length=64, blank=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        verbose_name = _("local review")
        verbose_name_plural = _("local reviews")
        constraints = [
            models.UniqueConstraint(
                fields=["version", "market"],
                condition=Q(state__in=OPEN_REVIEW_STATES),
                name="one_open_review_per_version_and_market",
            ),
            models.CheckConstraint(
                name="approval_pins_a_hash",
                condition=~Q(state="approved") | ~Q(approved_hash=""),
            ),
        ]

    def __str__(self):
        # The market by its code, as people name it, never by its key.
        return f"{self.version} · {self.market.code} · {self.get_state_display()}"


class ReviewEvent(DecisionEvent):
    """Each move of a local review (catalogue.workflows.REVIEW_TRANSITIONS), with the digest of
    the version's content at that moment, so an approval names exactly what was approved."""

    review = models.ForeignKey(
        LocalReview, on_delete=models.CASCADE, related_name="events", verbose_name=_("review")
    )
    content_hash = models.CharField(_("content hash"), max_length=64)

    class Meta(DecisionEvent.Meta):
        verbose_name = _("review event")
        verbose_name_plural = _("review events")


class ReviewComment(models.Model):
    """A remark on a review, anchored to a field of the task version or to a section id.

    Resolving one keeps it in the record, with who resolved it and when: a review's
    discussion is part of what was approved.
    """

    review = models.ForeignKey(
        LocalReview, on_delete=models.CASCADE, related_name="comments", verbose_name=_("review")
    )
    anchor = models.CharField(
        _("anchored to"),
        max_length=120,
        help_text=_("A field of the task version (say final_state) or a section id."),
    )
    body = models.TextField(_("comment text"))
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("written by"),
    )
    created_at = models.DateTimeField(_("written"), auto_now_add=True)
    resolved_at = models.DateTimeField(_("resolved"), null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("resolved by"),
    )

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("review comment")
        verbose_name_plural = _("review comments")

    def __str__(self):
        # Its words, not its anchor's internal name (the inline shows the anchor's label).
        return self.body[:60]

    @property
    def resolved(self):
        return self.resolved_at is not None


class ExposureEntry(models.Model):
    """Append-only: where and when a task was exposed, and in which artifact.

    The portal's own entries name it in English words the pages translate (PORTAL,
    PUBLIC_CATALOGUE); an entry staff write stays as written.
    """

    PORTAL = gettext_noop("MICA portal")
    PUBLIC_CATALOGUE = gettext_noop("public task catalogue")

    definition = models.ForeignKey(
        TaskDefinition, on_delete=models.CASCADE, related_name="exposures", verbose_name=_("task")
    )
    at = models.DateTimeField(_("when"))
    where = models.CharField(_("where"), max_length=120)
    artifact = models.CharField(_("artifact"), max_length=200)

    class Meta:
        ordering = ["at", "pk"]
        verbose_name = _("exposure log entry")
        verbose_name_plural = _("exposure log")

    def __str__(self):
        return f"{self.definition.slug} · {gettext(self.where)}"


class TaskEvent(DecisionEvent):
    """Each move of a task's life (catalogue.workflows.TASK_TRANSITIONS): promotion, a
    version made current, retirement with its reason. The version names what was judged."""

    definition = models.ForeignKey(
        TaskDefinition, on_delete=models.CASCADE, related_name="events", verbose_name=_("task")
    )
    version = models.ForeignKey(
        TaskVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("task version"),
    )

    class Meta(DecisionEvent.Meta):
        verbose_name = _("task event")
        verbose_name_plural = _("task events")


class HoldoutSalt(models.Model):
    """The secret that commits the portal to a holdout task's text without showing it.

    Each published edition's log entry carries, for every holdout task, SHA-256 over this
    salt and the task's content hash (catalogue.commitments). Kept under the holdout
    capability; revealed in a later entry when the task is retired or made public, so
    anyone can check that the contract then published is the one committed to before."""

    definition = models.OneToOneField(
        TaskDefinition, on_delete=models.PROTECT, related_name="+", verbose_name=_("task")
    )
    salt = models.CharField(_("salt"), max_length=64, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    revealed_at = models.DateTimeField(_("revealed"), null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("holdout salt")
        verbose_name_plural = _("holdout salts")

    def __str__(self):
        return self.definition.slug


class HoldoutCommitment(models.Model):
    """One holdout task's commitment in one published edition's log entry."""

    edition = models.ForeignKey(
        "methodology.Edition", on_delete=models.PROTECT, related_name="+", verbose_name=_("edition")
    )
    definition = models.ForeignKey(
        TaskDefinition, on_delete=models.PROTECT, related_name="+", verbose_name=_("task")
    )
    version = models.ForeignKey(
        TaskVersion, on_delete=models.PROTECT, related_name="+", verbose_name=_("task version")
    )
    content_hash = models.CharField(_("content hash"), max_length=64)
    commitment = models.CharField(_("commitment"), max_length=64)

    class Meta:
        ordering = ["edition", "definition"]
        verbose_name = _("holdout commitment")
        verbose_name_plural = _("holdout commitments")
        constraints = [
            models.UniqueConstraint(
                fields=["edition", "definition"], name="one_commitment_per_task_and_edition"
            ),
        ]

    def __str__(self):
        return f"{self.definition.slug} · {self.edition}"
