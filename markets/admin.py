from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db import models as django_models
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import TranslationAdmin, TranslationStackedInline

from markets import models
from markets.frozen import edition_published
from markets.selectors import competent_market_codes
from markets.services import (
    coverage_audit,
    datasheet_errors,
    platform_registration_draft_replacement,
    platform_registration_register,
    registration_drafters,
    require_platforms_editable,
    situation_errors,
)
from markets.workflows import OUTAGE_TRANSITIONS, outage_decide, outage_errors, outage_report
from mica.admin_decisions import DecisionAdmin, DecisionEventInline
from mica.bilingual_admin import BilingualAdmin
from mica.errors import DomainError
from mica.history_admin import HistoryAdmin
from mica.methodology.models import Edition, EditionStatus
from mica.text import is_blank
from mica.vocabulary import EvidenceType, RecoveryCondition, Surface, TaskFamily


class MarketScopedAdminMixin:
    """Local editors see and change only the markets where they hold a current competence."""

    formfield_overrides = {
        django_models.URLField: {"assume_scheme": "https"},
    }

    market_code_path = "market_edition__market__code"
    history_edition_path = "market_edition__edition"

    def _market_code(self, obj):
        for part in self.market_code_path.split("__"):
            obj = getattr(obj, part)
        return obj

    def _competent(self, request):
        return competent_market_codes(request.user)

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.market_code_path}__in": self._competent(request)})

    def _may_edit(self, request, obj):
        return (
            obj is None
            or request.user.is_superuser
            or (self._market_code(obj) in self._competent(request))
        )

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._may_edit(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._may_edit(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "market_edition" and not request.user.is_superuser:
            kwargs["queryset"] = models.MarketEdition.objects.filter(
                market__code__in=self._competent(request)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class SituationForm(forms.ModelForm):
    task_families = forms.MultipleChoiceField(
        label=_("task families"), choices=TaskFamily.choices, widget=forms.CheckboxSelectMultiple
    )
    surfaces = forms.MultipleChoiceField(
        label=_("surfaces"), choices=Surface.choices, widget=forms.CheckboxSelectMultiple
    )
    recovery_conditions = forms.MultipleChoiceField(
        label=_("recovery conditions"),
        choices=RecoveryCondition.choices,
        widget=forms.CheckboxSelectMultiple,
    )
    evidence_types = forms.MultipleChoiceField(
        label=_("evidence types"),
        choices=EvidenceType.choices,
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = models.IntegrationSituation
        exclude = ["status"]  # noqa: DJ006 - the admin picks the fields; status is never typed

    def clean(self):
        cleaned = super().clean()
        situation = self.instance
        for name, value in cleaned.items():
            if hasattr(situation, name) and name != "market_edition":
                setattr(situation, name, value)
        market_edition = cleaned.get("market_edition") or getattr(situation, "market_edition", None)
        if market_edition is None:
            return cleaned
        situation.market_edition = market_edition
        for name, errors in situation_errors(situation, market_edition.market.code).items():
            for error in errors:
                self.add_error(name if name in self.fields else None, error)
        return cleaned


class PublishedPartInline(TranslationStackedInline):
    """A part of a market edition, read-only once its edition is published (markets.frozen):
    the page shows what was published, and a change goes into a new edition."""

    def _open(self, obj):
        return obj is None or not edition_published(obj.edition_id)

    def has_add_permission(self, request, obj=None):
        return super().has_add_permission(request, obj) and self._open(obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._open(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._open(obj)


class HazardInline(PublishedPartInline):
    model = models.Hazard
    extra = 0


class LocalChangeInline(PublishedPartInline):
    model = models.LocalChange
    extra = 0


class DatasheetForm(forms.ModelForm):
    """Refuses a text naming a figure the datasheet cannot count (``{{hazard}}``)."""

    class Meta:
        model = models.Datasheet
        exclude = ["market_edition"]  # noqa: DJ006 - the inline sets its market edition

    def clean(self):
        cleaned = super().clean()
        texts = {n: v for n, v in cleaned.items() if n.split("_")[-1] in ("en", "ko")}
        sheet = models.Datasheet(**texts)
        for name, errors in datasheet_errors(sheet).items():
            for error in errors:
                self.add_error(name if name in self.fields else None, error)
        return cleaned


class DatasheetInline(PublishedPartInline):
    model = models.Datasheet
    form = DatasheetForm


class DataStatementInline(PublishedPartInline):
    model = models.DataStatement


def _coverage_html(audit):
    if audit.complete:
        return _("Complete")
    return format_html_join("", "<div>{}</div>", ((gap,) for gap in audit.gaps))


@admin.register(models.Market)
class MarketAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    list_display = ("code", "name", "native_name", "locale", "currency_code", "timezone")
    ordering = ("display_order",)

    def has_change_permission(self, request, obj=None):
        # Market identity facts are the method lead's; editors work on editions.
        return request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.MarketEdition)
class MarketEditionAdmin(MarketScopedAdminMixin, HistoryAdmin, BilingualAdmin, TranslationAdmin):
    market_code_path = "market__code"
    history_edition_path = "edition"
    list_display = ("market", "edition", "situation_count", "coverage")
    list_filter = ("edition",)
    readonly_fields = ("coverage",)
    inlines = [HazardInline, LocalChangeInline, DatasheetInline, DataStatementInline]

    def _open(self, obj):
        return obj is None or not edition_published(obj.edition_id)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._open(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._open(obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        # Only a draft edition takes a new market edition: choosing a published one is a
        # form error ("Select a valid choice"), not the guard's refusal at save.
        if db_field.name == "edition":
            kwargs["queryset"] = Edition.objects.filter(status=EditionStatus.DRAFT)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("market", "edition")
            .prefetch_related("situations")
        )

    @admin.display(description=_("situations"))
    def situation_count(self, obj):
        return len(obj.situations.all())

    @admin.display(description=_("coverage audit"))
    def coverage(self, obj):
        if obj.pk is None:
            return "—"
        return _coverage_html(coverage_audit(obj.situations.all()))


@admin.register(models.IntegrationSituation)
class IntegrationSituationAdmin(
    MarketScopedAdminMixin, HistoryAdmin, BilingualAdmin, TranslationAdmin
):
    form = SituationForm
    list_display = (
        "situation_id",
        "market_edition",
        "authorization_boundary",
        "completion_semantics",
        "status",
    )
    list_filter = (
        "market_edition__market",
        "authorization_boundary",
        "completion_semantics",
        "status",
    )
    search_fields = ("situation_id", "title_en", "title_ko")
    list_select_related = ("market_edition__market", "market_edition__edition")
    readonly_fields = ("status",)


class RepresentativePlatformInline(TranslationStackedInline):
    model = models.RepresentativePlatform
    extra = 0

    def _frozen(self, obj):
        return obj is not None and obj.frozen

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


@admin.register(models.PlatformRegistration)
class PlatformRegistrationAdmin(
    MarketScopedAdminMixin, HistoryAdmin, BilingualAdmin, TranslationAdmin
):
    """Draft, then frozen by someone who did not draft it; a frozen set is replaced by a
    draft that says why, frozen in turn by someone else (markets.services)."""

    list_display = (
        "market_edition",
        "task_family",
        "status",
        "registered_at",
        "platform_names",
        "supersedes",
    )
    list_filter = ("status", "market_edition__market", "task_family")
    readonly_fields = ("status", "registered_at", "registered_by", "supersedes", "drafted_by")
    inlines = [RepresentativePlatformInline]
    actions = ["pre_register", "start_replacement"]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("market_edition__market", "market_edition__edition", "supersedes")
            .prefetch_related("platforms")
        )

    @admin.display(description=_("platforms, primary first"))
    def platform_names(self, obj):
        return " → ".join(p.name for p in obj.platforms.all())

    @admin.display(description=_("drafted by (may not freeze it)"))
    def drafted_by(self, obj):
        if obj.pk is None:
            return "—"
        users = get_user_model().objects.filter(pk__in=registration_drafters(obj))
        return ", ".join(sorted(user.get_username() for user in users)) or "—"

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and (obj.frozen or obj.supersedes_id):
            fields += ["market_edition", "task_family"]
        if obj is not None and obj.frozen:
            fields += ["supersede_reason_en", "supersede_reason_ko"]
        return fields

    def has_delete_permission(self, request, obj=None):
        # A frozen set is the selection evidence of the runs on it: never deleted.
        if obj is not None and obj.frozen:
            return False
        return super().has_delete_permission(request, obj)

    def delete_queryset(self, request, queryset):
        frozen = queryset.exclude(status=models.RegistrationStatus.DRAFT)
        for registration in frozen:
            self.message_user(
                request,
                _("%(registration)s is frozen and was not deleted.")
                % {"registration": registration},
                messages.ERROR,
            )
        super().delete_queryset(request, queryset.filter(status=models.RegistrationStatus.DRAFT))

    def save_model(self, request, obj, form, change):
        if change:
            require_platforms_editable(models.PlatformRegistration.objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    def history_refusal(self, request, obj):
        try:
            require_platforms_editable(obj)
        except DomainError as frozen:
            return frozen.message
        return super().history_refusal(request, obj)

    @admin.action(description=_("Pre-register the selected platform sets (freezes them)"))
    def pre_register(self, request, queryset):
        for registration in queryset:
            try:
                platform_registration_register(registration_id=registration.pk, actor=request.user)
            except DomainError as error:
                self.message_user(request, f"{registration}: {error.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    _("%(registration)s is pre-registered.") % {"registration": registration},
                )

    @admin.action(description=_("Start replacing the selected frozen sets (a draft with a reason)"))
    def start_replacement(self, request, queryset):
        """Asks for the reason in both languages on a page of its own, then drafts each
        replacement; someone else freezes it."""
        reason_en = request.POST.get("reason_en", "")
        reason_ko = request.POST.get("reason_ko", "")
        if request.POST.get("confirm") != "yes" or is_blank(reason_en) or is_blank(reason_ko):
            context = {
                **self.admin_site.each_context(request),
                "title": _("Replace frozen platform sets"),
                "registrations": queryset,
                "reason_en": reason_en,
                "reason_ko": reason_ko,
                "reason_missing": request.POST.get("confirm") == "yes",
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(
                request, "admin/markets/platformregistration/replace_confirmation.html", context
            )
        for registration in queryset:
            try:
                draft = platform_registration_draft_replacement(
                    registration_id=registration.pk,
                    reason_en=reason_en,
                    reason_ko=reason_ko,
                    actor=request.user,
                )
            except DomainError as error:
                self.message_user(request, f"{registration}: {error.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    format_html(
                        _(
                            "A draft replacing {registration} is ready to edit: "
                            '<a href="{url}">open it</a>. Someone else freezes it.'
                        ),
                        registration=registration,
                        url=reverse("admin:markets_platformregistration_change", args=[draft.pk]),
                    ),
                )
        return None


def _platform_choice(platform):
    """A platform as the outage form offers it: market, family and rank (1 is primary)."""
    registration = platform.registration
    return (
        f"{registration.market_edition.market.code} · {registration.task_family} · "
        f"{platform.rank}. {platform.name} ({registration.get_status_display()})"
    )


class OutageReportForm(forms.ModelForm):
    """What an outage record states: which platform was down, when, and the evidence."""

    class Meta:
        model = models.PlatformOutage
        fields = ["platform", "first_day", "last_day", "evidence"]

    def clean(self):
        cleaned = super().clean()
        errors = outage_errors(
            cleaned.get("platform"),
            cleaned.get("first_day"),
            cleaned.get("last_day"),
            cleaned.get("evidence", ""),
        )
        for name, messages_ in errors.items():
            for message in messages_:
                self.add_error(name if name in self.fields else None, message)
        return cleaned


class OutageDecisionForm(forms.ModelForm):
    decision = forms.ChoiceField(
        label=_("Decision"),
        required=False,
        choices=[("", "—"), ("accept", _("Accept the outage")), ("reject", _("Reject"))],
    )
    reason = forms.CharField(label=_("Reason"), required=False, widget=forms.Textarea)

    class Meta:
        model = models.PlatformOutage
        fields = []


class OutageEventInline(DecisionEventInline):
    model = models.OutageEvent
    readonly_fields = (*DecisionEventInline.readonly_fields, "actor")
    fields = readonly_fields

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.PlatformOutage)
class PlatformOutageAdmin(MarketScopedAdminMixin, DecisionAdmin):
    """Reported by one person, accepted or rejected by another (markets.workflows); only
    an accepted outage lets a run on a fallback count."""

    market_code_path = "platform__registration__market_edition__market__code"
    form = OutageDecisionForm
    transitions = OUTAGE_TRANSITIONS
    list_display = ("platform", "market", "first_day", "last_day", "state", "reported_by")
    list_filter = ("state", "platform__registration__market_edition__market")
    list_select_related = (
        "platform__registration__market_edition__market",
        "reported_by",
    )
    readonly_fields = (
        "platform",
        "first_day",
        "last_day",
        "evidence",
        "reported_by",
        "reported_at",
        "state",
    )
    inlines = [OutageEventInline]

    @admin.display(description=_("market"))
    def market(self, obj):
        return obj.platform.registration.market_edition.market.code

    def has_add_permission(self, request):
        return admin.ModelAdmin.has_add_permission(self, request)

    def has_delete_permission(self, request, obj=None):
        return False  # a decision's grounds stay in the record

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else ()

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = OutageReportForm
            return admin.ModelAdmin.get_form(self, request, obj, **kwargs)
        return super().get_form(request, obj, **kwargs)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "platform":
            platforms = models.RepresentativePlatform.objects.exclude(
                registration__status=models.RegistrationStatus.DRAFT
            ).select_related("registration__market_edition__market")
            if not request.user.is_superuser:
                platforms = platforms.filter(
                    registration__market_edition__market__code__in=self._competent(request)
                )
            kwargs["queryset"] = platforms
            field = super().formfield_for_foreignkey(db_field, request, **kwargs)
            field.label_from_instance = _platform_choice
            return field
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        try:
            saved = outage_report(
                platform=obj.platform,
                first_day=obj.first_day,
                last_day=obj.last_day,
                evidence=obj.evidence,
                actor=request.user,
            )
        except DomainError as refused:
            request.decision_refused = True
            messages.error(request, refused.message)
            return None
        obj.pk = saved.pk
        return None

    def log_addition(self, request, obj, message):
        if getattr(request, "decision_refused", False):
            return None  # nothing was recorded
        return super().log_addition(request, obj, message)

    def response_add(self, request, obj, post_url_continue=None):
        if getattr(request, "decision_refused", False):
            return HttpResponseRedirect(reverse("admin:markets_platformoutage_changelist"))
        return super().response_add(request, obj, post_url_continue)

    def decide(self, request, obj, decision, data):
        outage_decide(
            outage_id=obj.pk, action=decision, reason=data.get("reason", ""), actor=request.user
        )


@admin.register(models.MarketCompetence)
class MarketCompetenceAdmin(admin.ModelAdmin):
    list_display = ("user", "market", "role", "verified_by", "valid_until")
    list_filter = ("market", "role")
    list_select_related = ("user", "market", "verified_by")

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser
