from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from mica.vocabulary import (
    AuthorizationBoundary,
    CompletionSemantics,
    DiagnosticAxis,
    LocalityCondition,
)
from mica.workflows import DecisionEvent

MARKET_CODE_VALIDATOR = RegexValidator(r"^[A-Z]{2}$", _("A market code is two capital letters."))


class Market(models.Model):
    """One of the country markets the index covers."""

    code = models.CharField(
        _("code"), max_length=2, unique=True, validators=[MARKET_CODE_VALIDATOR]
    )
    name = models.CharField(_("name"), max_length=80)
    native_name = models.CharField(_("native name"), max_length=80)
    native_lang = models.CharField(
        _("language of the native name"), max_length=16, help_text=_("A BCP 47 tag, e.g. ja.")
    )
    locale = models.CharField(_("locale"), max_length=16)
    currency_code = models.CharField(_("currency code"), max_length=3)
    currency_symbol = models.CharField(_("currency symbol"), max_length=8)
    timezone = models.CharField(_("time zone"), max_length=64)
    display_order = models.PositiveSmallIntegerField(_("display order"), unique=True)

    class Meta:
        ordering = ["display_order"]
        verbose_name = _("market")
        verbose_name_plural = _("markets")

    def __str__(self):
        return f"{self.code} · {self.name}"


class MarketEdition(models.Model):
    """What a market declares for one edition of the method."""

    market = models.ForeignKey(
        Market, on_delete=models.PROTECT, related_name="editions", verbose_name=_("market")
    )
    edition = models.ForeignKey(
        "methodology.Edition",
        on_delete=models.PROTECT,
        related_name="market_editions",
        verbose_name=_("edition"),
    )
    edition_note = models.TextField(_("edition note"))
    profile_summary = models.TextField(_("integration profile summary"))

    class Meta:
        ordering = ["market__display_order"]
        verbose_name = _("market edition")
        verbose_name_plural = _("market editions")
        constraints = [
            models.UniqueConstraint(
                fields=["market", "edition"], name="one_market_edition_per_edition"
            )
        ]

    def __str__(self):
        return f"{self.market.code} · {self.edition}"


class Hazard(models.Model):
    market_edition = models.ForeignKey(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="hazards",
        verbose_name=_("market edition"),
    )
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    title = models.CharField(_("title"), max_length=200)
    detail = models.TextField(_("detail"))
    diagnostic_axis = models.CharField(
        _("diagnostic axis"), max_length=20, choices=DiagnosticAxis.choices
    )

    class Meta:
        ordering = ["position", "pk"]
        verbose_name = _("hazard")
        verbose_name_plural = _("hazards")

    def __str__(self):
        return self.title


class LocalChange(models.Model):
    """One line of "what changes when the task is local"."""

    market_edition = models.ForeignKey(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="local_changes",
        verbose_name=_("market edition"),
    )
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    text = models.TextField(_("text"))
    locality_condition = models.CharField(
        _("locality condition"), max_length=30, choices=LocalityCondition.choices
    )

    class Meta:
        ordering = ["position", "pk"]
        verbose_name = _("local change")
        verbose_name_plural = _("local changes")

    def __str__(self):
        return self.text[:60]


class SituationStatus(models.TextChoices):
    DECLARED_NOT_EXERCISED = "declared-not-exercised", _("Declared, not exercised")
    EXERCISED = "exercised", _("Exercised by run evidence")


class ApiDocumented(models.TextChoices):
    YES = "yes", _("A public API is documented")
    NO = "no", _("No public API is documented")
    UNKNOWN = "unknown", _("Not known whether an API is documented")


class ProductionExecution(models.TextChoices):
    KNOWN_POSSIBLE = "known-possible", _("Production execution is known to be possible")
    KNOWN_IMPOSSIBLE = "known-impossible", _("Production execution is known to be impossible")
    NOT_KNOWN = "not-known", _("Not known whether production execution is possible")


class IntegrationSituation(models.Model):
    """One representative local execution condition of a market edition."""

    market_edition = models.ForeignKey(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="situations",
        verbose_name=_("market edition"),
    )
    situation_id = models.SlugField(_("situation id"), max_length=80)
    position = models.PositiveSmallIntegerField(_("position"), default=1)
    title = models.CharField(_("title"), max_length=200)
    detail = models.TextField(_("detail"))
    capability_area = models.CharField(_("capability area"), max_length=200)
    # Multi-valued vocabulary codes; validated against mica.vocabulary on save.
    task_families = models.JSONField(_("task families"), default=list)
    surfaces = models.JSONField(_("surfaces"), default=list)
    authorization_boundary = models.CharField(
        _("authorization boundary"), max_length=30, choices=AuthorizationBoundary.choices
    )
    completion_semantics = models.CharField(
        _("completion semantics"), max_length=30, choices=CompletionSemantics.choices
    )
    recovery_conditions = models.JSONField(_("recovery conditions"), default=list)
    evidence_types = models.JSONField(_("evidence types"), default=list)
    status = models.CharField(
        _("status"),
        max_length=24,
        choices=SituationStatus.choices,
        default=SituationStatus.DECLARED_NOT_EXERCISED,
    )
    api_documented = models.CharField(
        _("API documented"),
        max_length=8,
        choices=ApiDocumented.choices,
        default=ApiDocumented.UNKNOWN,
    )
    production_execution = models.CharField(
        _("production execution"),
        max_length=20,
        choices=ProductionExecution.choices,
        default=ProductionExecution.NOT_KNOWN,
    )
    facts_source = models.URLField(_("source of these facts"), max_length=500)
    facts_source_date = models.DateField(_("source checked on"))

    class Meta:
        ordering = ["market_edition__market__display_order", "position", "pk"]
        verbose_name = _("integration situation")
        verbose_name_plural = _("integration situations")
        constraints = [
            models.UniqueConstraint(
                fields=["market_edition", "situation_id"],
                name="situation_id_unique_in_market_edition",
            ),
        ]

    def __str__(self):
        return self.situation_id


class RegistrationStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    REGISTERED = "registered", _("Pre-registered")
    SUPERSEDED = "superseded", _("Superseded")


class PlatformRegistration(models.Model):
    """The representative platforms of one market and task family, fixed before a run.

    Once pre-registered the set is frozen: changing it means a new registration
    that supersedes this one, with a reason.
    """

    market_edition = models.ForeignKey(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="platform_registrations",
        verbose_name=_("market edition"),
    )
    task_family = models.SlugField(_("task family"), max_length=60)
    status = models.CharField(
        _("status"),
        max_length=12,
        choices=RegistrationStatus.choices,
        default=RegistrationStatus.DRAFT,
    )
    registered_at = models.DateTimeField(_("pre-registered at"), null=True, blank=True)
    registered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("pre-registered by"),
    )
    supersedes = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="superseded_by",
        verbose_name=_("supersedes"),
    )
    supersede_reason = models.TextField(_("reason for superseding"), blank=True)

    class Meta:
        ordering = ["market_edition__market__display_order", "task_family", "pk"]
        verbose_name = _("platform registration")
        verbose_name_plural = _("platform registrations")
        constraints = [
            # One set in force and at most one draft (a new set, or the replacement of
            # the set in force) per family: the draft is frozen by someone else.
            models.UniqueConstraint(
                fields=["market_edition", "task_family"],
                condition=Q(status="registered"),
                name="one_registered_set_per_family",
            ),
            models.UniqueConstraint(
                fields=["market_edition", "task_family"],
                condition=Q(status="draft"),
                name="one_draft_set_per_family",
            ),
            models.CheckConstraint(
                condition=Q(supersedes__isnull=True) | ~Q(supersede_reason=""),
                name="superseding_needs_a_reason",
            ),
        ]

    def __str__(self):
        return f"{self.market_edition.market.code} · {self.task_family}"

    @property
    def frozen(self):
        return self.status != RegistrationStatus.DRAFT

    @property
    def is_replacement_draft(self):
        return self.status == RegistrationStatus.DRAFT and self.supersedes_id is not None


# The registrations a reader is shown: the set in force, or a first draft. A superseded
# set is history, and the draft replacing a set in force is staff's until it is frozen.
LIVE_REGISTRATION = ~Q(status=RegistrationStatus.SUPERSEDED) & ~Q(
    status=RegistrationStatus.DRAFT, supersedes__isnull=False
)


class PlatformKind(models.TextChoices):
    WEB = "web", _("Website")
    APP = "app", _("App")
    WEB_AND_APP = "web-and-app", _("Website and app")
    SUPER_APP = "super-app", _("Super-app")
    MESSAGING_CHANNEL = "messaging-channel", _("Messaging channel")
    API = "api", _("API")


class RepresentativePlatform(models.Model):
    """A platform of a registration; rank 1 is primary, the rest are fallbacks in order."""

    registration = models.ForeignKey(
        PlatformRegistration,
        on_delete=models.CASCADE,
        related_name="platforms",
        verbose_name=_("registration"),
    )
    rank = models.PositiveSmallIntegerField(_("rank"))
    name = models.CharField(_("name"), max_length=120)
    native_name = models.CharField(_("native name"), max_length=120)
    kind = models.CharField(_("kind"), max_length=20, choices=PlatformKind.choices)
    snapshot_date = models.DateField(_("version or snapshot date"))
    local_reach = models.TextField(_("evidence of local reach"))
    availability = models.TextField(_("current availability"))
    relevance = models.TextField(_("task relevance"))
    source = models.URLField(_("source"), max_length=500)
    source_accessed = models.DateField(_("source accessed"))

    class Meta:
        ordering = ["rank"]
        verbose_name = _("representative platform")
        verbose_name_plural = _("representative platforms")
        constraints = [
            models.UniqueConstraint(fields=["registration", "rank"], name="one_platform_per_rank"),
        ]

    def __str__(self):
        return self.name


class OutageState(models.TextChoices):
    REPORTED = "reported", _("Reported")
    ACCEPTED = "accepted", _("Accepted")
    REJECTED = "rejected", _("Rejected")


class PlatformOutage(models.Model):
    """A documented outage of a registered platform: what lets a run use the next
    pre-registered fallback (seed: "A fallback is used only for a documented platform
    outage, never because it is easier for one system"). It counts once staff other than
    the person who reported it accepted it (markets.workflows)."""

    platform = models.ForeignKey(
        RepresentativePlatform,
        on_delete=models.PROTECT,
        related_name="outages",
        verbose_name=_("platform that was down"),
    )
    first_day = models.DateField(_("down from"), help_text=_("The first day it was down."))
    last_day = models.DateField(_("down until"), help_text=_("The last day it was down."))
    evidence = models.TextField(
        _("evidence of the outage"),
        help_text=_(
            "What shows the platform was down: its status page, error captures, the "
            "operator's notice, with links."
        ),
    )
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("reported by"),
    )
    reported_at = models.DateTimeField(_("reported at"), auto_now_add=True)
    state = models.CharField(
        _("state"), max_length=10, choices=OutageState.choices, default=OutageState.REPORTED
    )

    class Meta:
        ordering = ["-first_day", "pk"]
        verbose_name = _("platform outage")
        verbose_name_plural = _("platform outages")
        constraints = [
            models.CheckConstraint(
                condition=Q(last_day__gte=models.F("first_day")), name="outage_ends_after_start"
            ),
        ]

    def __str__(self):
        return f"{self.platform} · {self.first_day:%Y-%m-%d}–{self.last_day:%Y-%m-%d}"


class OutageEvent(DecisionEvent):
    """A decision on an outage record: accepted or rejected, by whom and why."""

    outage = models.ForeignKey(
        PlatformOutage, on_delete=models.CASCADE, related_name="events", verbose_name=_("outage")
    )

    class Meta(DecisionEvent.Meta):
        verbose_name = _("outage decision")
        verbose_name_plural = _("outage decisions")


# The datasheet's texts, in the order a market page and the content file give them.
DATASHEET_FIELDS = (
    "motivation",
    "composition",
    "collection",
    "intended_uses",
    "distribution",
    "maintenance",
)


class Datasheet(models.Model):
    market_edition = models.OneToOneField(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="datasheet",
        verbose_name=_("market edition"),
    )
    motivation = models.TextField(_("motivation"))
    composition = models.TextField(_("composition"))
    collection = models.TextField(_("collection"))
    intended_uses = models.TextField(_("intended uses"))
    distribution = models.TextField(_("distribution"))
    maintenance = models.TextField(_("maintenance"))

    class Meta:
        verbose_name = _("datasheet")
        verbose_name_plural = _("datasheets")

    def __str__(self):
        return str(self.market_edition)


# The data statement's texts, in the order a market page and the content file give them.
DATA_STATEMENT_FIELDS = ("language_variety", "region", "channel_and_register", "reviewer_context")


class DataStatement(models.Model):
    """Language variety, region, channel and reviewer context, by role only."""

    market_edition = models.OneToOneField(
        MarketEdition,
        on_delete=models.CASCADE,
        related_name="data_statement",
        verbose_name=_("market edition"),
    )
    language_variety = models.TextField(_("language variety"))
    region = models.TextField(_("region"))
    channel_and_register = models.TextField(_("channel and register"))
    reviewer_context = models.TextField(
        _("reviewer context"), help_text=_("Describe roles only, never a person.")
    )

    class Meta:
        verbose_name = _("data statement")
        verbose_name_plural = _("data statements")

    def __str__(self):
        return str(self.market_edition)


class CompetenceRole(models.TextChoices):
    AUTHOR = "author", _("Local task author")
    REVIEWER = "reviewer", _("Local reviewer")
    LEAD = "lead", _("Market lead")


class MarketCompetence(models.Model):
    """Who may author or review for a market, verified by someone else, until a date."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="market_competences",
        verbose_name=_("user"),
    )
    market = models.ForeignKey(
        Market, on_delete=models.CASCADE, related_name="competences", verbose_name=_("market")
    )
    role = models.CharField(_("role"), max_length=10, choices=CompetenceRole.choices)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("verified by"),
    )
    valid_until = models.DateField(_("valid until"))

    class Meta:
        ordering = ["market__display_order", "role"]
        verbose_name = _("market competence")
        verbose_name_plural = _("market competences")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "market", "role"], name="one_competence_per_role"
            ),
            models.CheckConstraint(
                condition=~Q(user=models.F("verified_by")), name="competence_not_self_verified"
            ),
        ]

    def __str__(self):
        return f"{self.user} · {self.market.code} · {self.get_role_display()}"
