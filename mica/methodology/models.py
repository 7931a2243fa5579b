from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class EditionStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")
    SUPERSEDED = "superseded", _("Superseded")


# Version numbers keep their dots (preview-0.1); the edition URLs accept the same.
EDITION_SLUG_VALIDATOR = RegexValidator(
    r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$",
    _("Use lower-case letters and digits, joined by single hyphens or dots (e.g. preview-0.1)."),
)


# A threshold stated as a share is a percentage (mica.scoring.Thresholds): 0 to 100.
PERCENTAGE = [MinValueValidator(0), MaxValueValidator(100)]


class Edition(models.Model):
    """One version of the method. Everything the portal publishes belongs to one."""

    slug = models.CharField(
        _("slug"), max_length=40, unique=True, validators=[EDITION_SLUG_VALIDATOR]
    )
    version_label = models.CharField(_("version label"), max_length=80)
    status = models.CharField(
        _("status"), max_length=12, choices=EditionStatus.choices, default=EditionStatus.DRAFT
    )
    published_on = models.DateField(_("published on"), null=True, blank=True)
    review_cutoff = models.DateField(_("review cutoff"), null=True, blank=True)
    # Publication thresholds: null means "not set", and the gate refuses. Seed 000 names
    # them "runs per task, a minimum cell sample size, task coverage, or a maximum
    # ineligible discard rate"; the help says each one's unit and what the gate does with it.
    min_eligible_runs = models.PositiveIntegerField(
        _("minimum eligible runs"),
        null=True,
        blank=True,
        help_text=_(
            "In runs: the fewest eligible runs a cell needs before its result can be "
            "published. Empty means not set, and the gate then refuses every cell."
        ),
    )
    min_coverage = models.DecimalField(
        _("minimum coverage (%)"),
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=PERCENTAGE,
        help_text=_(
            "In percent, from 0 to 100: the share of a market's canonical tasks in a family "
            "that a cell must have attempted. Empty means not set, and the gate then "
            "refuses every cell."
        ),
    )
    runs_per_task = models.PositiveIntegerField(
        _("runs per task"),
        null=True,
        blank=True,
        help_text=_(
            "In runs: how often each attempted task must be run in a cell, and the k of its "
            "reliability across repeats (0 leaves k to the cell's own fewest runs). Empty "
            "means not set, and the gate then refuses every cell."
        ),
    )
    max_ineligible_discard_rate = models.DecimalField(
        _("maximum ineligible discard rate (%)"),
        max_digits=5,
        decimal_places=2,
        null=True,
        blank=True,
        validators=PERCENTAGE,
        help_text=_(
            "In percent, from 0 to 100: the largest share of a cell's attempts that may be "
            "discarded as ineligible (an environment fault, never a failure). Empty means not "
            "set, and the gate then refuses every cell."
        ),
    )
    # The pack's frame (title, intro, status lines, labels) as {en, ko} texts.
    pack_texts = models.JSONField(_("pack texts"), default=dict, blank=True)
    # The public task catalogue in force when the edition was published; a draft
    # follows the live catalogue until then.
    catalogue_snapshot = models.JSONField(
        _("task catalogue"), default=list, blank=True, editable=False
    )

    class Meta:
        ordering = ["-published_on", "-pk"]
        verbose_name = _("edition")
        verbose_name_plural = _("editions")

    def __str__(self):
        return self.version_label

    @property
    def thresholds_set(self):
        """All four or none: the seed names runs per task, a minimum cell sample size, task
        coverage and a maximum ineligible discard rate, and the gate never guesses one."""
        return None not in self.thresholds

    @property
    def thresholds(self):
        return (
            self.min_eligible_runs,
            self.min_coverage,
            self.runs_per_task,
            self.max_ineligible_discard_rate,
        )


class ClaimKind(models.TextChoices):
    CURRENT_RULE = "current-rule", _("Current rule")
    MICA_POLICY = "mica-policy", _("MICA policy")
    EXTERNAL_EVIDENCE = "external-evidence", _("External evidence")
    OPEN_QUESTION = "open-question", _("Open question")


class ChapterBody(models.TextChoices):
    ITEMS = "items", _("Claims and items")
    POLICY_REGISTER = "policy_register", _("Policy register")
    REFERENCES = "references", _("References")
    GLOSSARY = "glossary", _("Glossary")
    COLOPHON = "colophon", _("Colophon")


class ItemType(models.TextChoices):
    CLAIM = "claim", _("Claim")
    STATUS = "status", _("Implemented or planned item")
    STEP = "step", _("Step")


class ItemState(models.TextChoices):
    IMPLEMENTED = "implemented", _("Implemented")
    PLANNED = "planned", _("Planned")


class SectionRecord(models.Model):
    """A record a reader can cite and challenge by its stable section id.

    The id is unique within the edition across every kind of record (checked by
    the services), never changes once the edition is published, and does not
    depend on the record's number or position.
    """

    edition = models.ForeignKey(
        Edition, on_delete=models.CASCADE, related_name="+", verbose_name=_("edition")
    )
    section_id = models.SlugField(_("section id"), max_length=120)
    position = models.PositiveSmallIntegerField(_("position"), default=1)

    class Meta:
        abstract = True
        ordering = ["position", "pk"]

    def __str__(self):
        return self.section_id


def _unique_section(name):
    return [
        models.UniqueConstraint(fields=["edition", "section_id"], name=f"{name}_section_unique")
    ]


class ReadingKind(SectionRecord):
    """One entry of the reading vocabulary: what a claim kind means."""

    kind = models.CharField(_("claim kind"), max_length=20, choices=ClaimKind.choices)
    label = models.CharField(_("label"), max_length=80)
    definition = models.TextField(_("definition"))

    class Meta(SectionRecord.Meta):
        verbose_name = _("reading vocabulary entry")
        verbose_name_plural = _("reading vocabulary")
        constraints = _unique_section("readingkind")


class Chapter(SectionRecord):
    number = models.PositiveSmallIntegerField(_("number"))
    title = models.CharField(_("title"), max_length=200)
    lead = models.TextField(_("lead"))
    body = models.CharField(
        _("body"), max_length=20, choices=ChapterBody.choices, default=ChapterBody.ITEMS
    )
    in_pack = models.BooleanField(_("in the Markdown pack"), default=True)

    class Meta(SectionRecord.Meta):
        verbose_name = _("chapter")
        verbose_name_plural = _("chapters")
        constraints = _unique_section("chapter")


class ChapterItem(SectionRecord):
    """A claim (with its kind), an implemented-or-planned item, or a step of a chapter."""

    chapter = models.ForeignKey(
        Chapter, on_delete=models.CASCADE, related_name="items", verbose_name=_("chapter")
    )
    item_type = models.CharField(
        _("type"), max_length=10, choices=ItemType.choices, default=ItemType.CLAIM
    )
    kind = models.CharField(_("claim kind"), max_length=20, choices=ClaimKind.choices, blank=True)
    state = models.CharField(_("state"), max_length=12, choices=ItemState.choices, blank=True)
    term = models.CharField(_("term"), max_length=300)
    detail = models.TextField(_("detail"))
    reference_keys = models.JSONField(
        _("cited references"),
        default=list,
        blank=True,
        help_text=_("Keys of the references this claim cites."),
    )
    link = models.CharField(_("link"), max_length=200, blank=True)
    link_label = models.CharField(_("link label"), max_length=120, blank=True)
    # A reviewer approves the Korean text against one English source: the digest
    # of both texts at approval. Editing either side leaves the claim unapproved.
    korean_approved_digest = models.CharField(
        _("Korean approved for"), max_length=64, blank=True, editable=False
    )
    korean_approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        editable=False,
        verbose_name=_("Korean approved by"),
    )
    korean_approved_at = models.DateTimeField(
        _("Korean approved at"), null=True, blank=True, editable=False
    )
    # Who answers for the claim: challenges to it wait in their queue.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("owner"),
        help_text=_("The person who answers challenges to this claim."),
    )

    class Meta(SectionRecord.Meta):
        verbose_name = _("claim or item")
        verbose_name_plural = _("claims and items")
        constraints = _unique_section("chapteritem")


class ReferenceGroup(SectionRecord):
    chapter = models.ForeignKey(
        Chapter,
        on_delete=models.CASCADE,
        related_name="reference_groups",
        verbose_name=_("chapter"),
    )
    title = models.CharField(_("title"), max_length=200, blank=True)
    intro = models.TextField(_("introduction"), blank=True)

    class Meta(SectionRecord.Meta):
        verbose_name = _("reference group")
        verbose_name_plural = _("reference groups")
        constraints = _unique_section("referencegroup")


class WorkType(models.TextChoices):
    """The kind of a cited work; the values are the CSL item types the export writes."""

    CONFERENCE_PAPER = "paper-conference", _("Conference paper")
    JOURNAL_ARTICLE = "article-journal", _("Journal article")
    PREPRINT = "article", _("Preprint")
    BOOK = "book", _("Book")
    REPORT = "report", _("Report")
    SOFTWARE = "software", _("Software")
    WEB_PAGE = "webpage", _("Web page")


# "2024", "2024-08" or "2024-08-11": a work names its date as precisely as it does.
ISSUED_VALIDATOR = RegexValidator(
    r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$",
    _("Write the date as YYYY, YYYY-MM or YYYY-MM-DD."),
)


class Reference(SectionRecord):
    """A cited work: the label and notes the method prints, and the work's own
    bibliographic data (authors, date, container) that citation exports read."""

    key = models.SlugField(_("key"), max_length=60)
    group = models.ForeignKey(
        ReferenceGroup, on_delete=models.PROTECT, related_name="references", verbose_name=_("group")
    )
    title = models.CharField(_("title"), max_length=300)
    subtitle = models.CharField(_("subtitle"), max_length=300, blank=True)
    url = models.URLField(_("URL"), max_length=500)
    venue = models.CharField(_("venue and year"), max_length=200, blank=True)
    borrowed = models.TextField(_("what was borrowed"), blank=True)
    not_adopted = models.TextField(_("what was not adopted"), blank=True)
    note = models.TextField(_("note"), blank=True)
    accessed_on = models.DateField(_("accessed on"), null=True, blank=True)
    # The cited work as a citation names it. The label above is how the method
    # refers to the work ("WebArena", "Keeney & Raiffa") and is not its title.
    work_type = models.CharField(
        _("kind of work"), max_length=20, choices=WorkType.choices, blank=True
    )
    work_title = models.CharField(
        _("title of the work"),
        max_length=300,
        blank=True,
        help_text=_("Only when the label, or the label and the subtitle, are not the title."),
    )
    authors = models.TextField(
        _("authors"),
        blank=True,
        help_text=_("One person per line, as the work names them: “Family, Given”."),
    )
    organisation_authors = models.TextField(
        _("organisations as authors"),
        blank=True,
        help_text=_("One organisation per line, for a work issued in an organisation’s name."),
    )
    issued = models.CharField(
        _("issued"),
        max_length=10,
        blank=True,
        validators=[ISSUED_VALIDATOR],
        help_text=_("YYYY, YYYY-MM or YYYY-MM-DD; empty only for an undated web page."),
    )
    container_title = models.CharField(
        _("published in"),
        max_length=300,
        blank=True,
        help_text=_("The proceedings, journal or website, as the work names it."),
    )
    publisher = models.CharField(_("publisher"), max_length=200, blank=True)
    volume = models.CharField(pgettext_lazy("citation", "volume"), max_length=20, blank=True)
    issue = models.CharField(pgettext_lazy("citation", "issue"), max_length=20, blank=True)
    page = models.CharField(pgettext_lazy("citation", "pages"), max_length=30, blank=True)
    number = models.CharField(
        _("number"),
        max_length=60,
        blank=True,
        help_text=_("A report number or a preprint identifier."),
    )

    class Meta(SectionRecord.Meta):
        verbose_name = _("reference")
        verbose_name_plural = _("references")
        constraints = [
            *_unique_section("reference"),
            models.UniqueConstraint(fields=["edition", "key"], name="reference_key_unique"),
        ]


class GlossaryTerm(SectionRecord):
    term = models.CharField(_("term"), max_length=200)
    definition = models.TextField(_("definition"))

    class Meta(SectionRecord.Meta):
        verbose_name = _("glossary term")
        verbose_name_plural = _("glossary")
        constraints = _unique_section("glossaryterm")


class ContractSection(SectionRecord):
    """A section of the operational contract; numbered as the Korean page numbers it."""

    number = models.CharField(_("number"), max_length=8, blank=True)
    title = models.CharField(_("title"), max_length=200)
    eyebrow = models.CharField(_("eyebrow"), max_length=120, blank=True)
    lead = models.TextField(_("lead"), blank=True)
    # Per language, and not a translation: seed 001 numbers the items of 5.1, 6.1 and 8.4,
    # which seed 000 gives by their terms.
    numbered_en = models.BooleanField(_("items numbered in English"), default=False)
    numbered_ko = models.BooleanField(_("items numbered in Korean"), default=False)

    class Meta(SectionRecord.Meta):
        verbose_name = _("contract section")
        verbose_name_plural = _("contract sections")
        constraints = _unique_section("contractsection")


class ContractItem(SectionRecord):
    # Not "section": its column would collide with the record's own section_id.
    contract_section = models.ForeignKey(
        ContractSection,
        on_delete=models.CASCADE,
        related_name="items",
        verbose_name=_("contract section"),
    )
    term = models.CharField(_("term"), max_length=300, blank=True)
    detail = models.TextField(_("detail"))

    class Meta(SectionRecord.Meta):
        verbose_name = _("contract item")
        verbose_name_plural = _("contract items")
        constraints = _unique_section("contractitem")


class PolicyLine(SectionRecord):
    """One present-tense statement of the policy register."""

    term = models.CharField(_("term"), max_length=200)
    detail = models.TextField(_("detail"))

    class Meta(SectionRecord.Meta):
        verbose_name = _("policy register line")
        verbose_name_plural = _("policy register")
        constraints = _unique_section("policyline")


SECTION_MODELS = [
    ReadingKind,
    Chapter,
    ChapterItem,
    ReferenceGroup,
    Reference,
    GlossaryTerm,
    ContractSection,
    ContractItem,
    PolicyLine,
]


class LanguageCompetence(models.Model):
    """Who may review a translation into a language, verified by someone else, until a date
    (the pattern of markets.MarketCompetence: a reviewer's claim to read the language as a
    local reader does is checked by another person and lapses)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="language_competences",
        verbose_name=_("user"),
    )
    language = models.CharField(_("language"), max_length=8, choices=settings.LANGUAGES)
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("verified by"),
    )
    valid_until = models.DateField(_("valid until"))

    class Meta:
        ordering = ["language", "user"]
        verbose_name = _("language competence")
        verbose_name_plural = _("language competences")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "language"], name="one_competence_per_language"
            ),
            models.CheckConstraint(
                condition=~models.Q(user=models.F("verified_by")),
                name="language_competence_not_self_verified",
            ),
        ]

    def __str__(self):
        return f"{self.user} · {self.get_language_display()}"
