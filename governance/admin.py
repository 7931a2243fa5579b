from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import TranslationAdmin

from governance.models import Appeal, DisclosureStatement, GateCell, PersonDeclaration, Withdrawal
from governance.selectors import disclosure_current, disclosure_key_taken
from governance.services import (
    APPEAL_TRANSITIONS,
    STATEMENT_CHANGED_MEANWHILE,
    appeal_decide,
    disclosure_add,
    disclosure_amount_band_errors,
    disclosure_supersede,
)
from mica.admin_decisions import DecisionAdmin
from mica.admin_text import as_written, written_field
from mica.bilingual_admin import BilingualAdmin
from mica.errors import DomainError
from mica.history_admin import HistoryAdmin


@admin.register(GateCell)
class GateCellAdmin(admin.ModelAdmin):
    """Derived from the attempts by the gate; read here, never typed in."""

    list_display = (
        "__str__",
        "eligible_runs",
        "successes",
        "accuracy",
        "blockers",
        "publication_eligible",
        "computed_at",
    )
    list_filter = ("publication_eligible", "data_status", "verification", "market", "family")
    list_select_related = ("snapshot__system", "market", "family")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class AppealDecisionForm(forms.ModelForm):
    decision = forms.ChoiceField(
        label=_("Decision"),
        required=False,
        choices=[
            ("", "—"),
            ("uphold", _("Uphold (reopen the decision)")),
            ("dismiss", _("Dismiss (the decision stands)")),
        ],
    )
    reason = forms.CharField(label=_("Public reason"), required=False, widget=forms.Textarea)

    class Meta:
        model = Appeal
        fields = []


@admin.register(Appeal)
class AppealAdmin(DecisionAdmin):
    form = AppealDecisionForm
    transitions = APPEAL_TRANSITIONS
    list_display = ("__str__", "state", "received_at", "decided_at")
    list_filter = ("state",)
    readonly_fields = (
        "challenge",
        "grounds_as_written",
        "state",
        "deciding_role",
        "decided_reason",
        "received_at",
        "decided_at",
        "decision_events",
    )

    # The stored reason is shown, not bound: a read-only "reason" would drop the form's
    # own field of that name, and every decision would be refused for want of a reason.
    # The appellant's words, in the language the challenge was filed in.
    grounds_as_written = written_field(
        "grounds", _("grounds"), lambda appeal: appeal.challenge.language
    )

    @admin.display(description=_("deciding role"))
    def deciding_role(self, obj):
        return obj.decided_role_label if obj.decided_role else "—"

    @admin.display(description=_("reason given"))
    def decided_reason(self, obj):
        return as_written(obj.reason)

    def decide(self, request, obj, decision, data):
        appeal_decide(
            appeal_id=obj.pk,
            uphold=decision == "uphold",
            reason=data.get("reason", ""),
            actor=request.user,
        )


@admin.register(PersonDeclaration)
class PersonDeclarationAdmin(admin.ModelAdmin):
    """Private declarations; the public page shows roles only."""

    list_display = ("user", "holdout_access", "updated_at")
    filter_horizontal = ("affiliated_systems", "conflicted_systems")

    def has_module_permission(self, request):
        return request.user.is_superuser


@admin.register(Withdrawal)
class WithdrawalAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    list_display = ("figure", "original_value", "corrected_value", "decided_on")

    def has_delete_permission(self, request, obj=None):
        return False  # a withdrawn figure stays visible as withdrawn


class DisclosureStatementForm(forms.ModelForm):
    def clean(self):
        cleaned = super().clean()
        for field, errors in disclosure_amount_band_errors(cleaned).items():
            for message in errors:
                self.add_error(field, message)
        if self.instance.pk is None and disclosure_key_taken(cleaned.get("key")):
            self.add_error("key", _("This key is taken."))
        return cleaned


class DisclosureStanding(admin.SimpleListFilter):
    title = _("standing")
    parameter_name = "standing"

    def lookups(self, request, model_admin):
        return [("current", _("Current")), ("superseded", _("Superseded"))]

    def queryset(self, request, queryset):
        if self.value() == "current":
            return queryset.filter(superseded_at__isnull=True)
        if self.value() == "superseded":
            return queryset.filter(superseded_at__isnull=False)
        return queryset


@admin.register(DisclosureStatement)
class DisclosureStatementAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    """The register, changed only through its supersede service: saving a change writes a
    new statement that supersedes this one, which stays public as history and is never
    changed or deleted again. A statement's history is read, never reverted: the register
    itself is the record of its earlier texts."""

    form = DisclosureStatementForm
    list_display = (
        "key",
        "category",
        "title",
        "basis",
        "confirmed_on",
        "is_current",
        "created_at",
        "superseded_at",
    )
    list_filter = (DisclosureStanding, "category", "basis")
    search_fields = ("key", "title_en", "title_ko", "statement_en", "statement_ko")
    fields = (
        "key",
        "category",
        "title",
        "statement",
        "basis",
        "confirmed_on",
        "confirm_every_days",
        "amount_min",
        "amount_max",
        "amount_currency",
        "amount_period",
        "supersedes",
        "created_at",
        "superseded_at",
    )

    @admin.display(boolean=True, description=_("current"))
    def is_current(self, obj):
        return obj.superseded_at is None

    def get_readonly_fields(self, request, obj=None):
        stated = ("supersedes", "created_at", "superseded_at")
        # A statement keeps its key for life: the register follows a key through its changes.
        return stated if obj is None else ("key", *stated)

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or obj.superseded_at is None)

    def has_delete_permission(self, request, obj=None):
        return False  # the register keeps every statement public, superseded ones too

    def history_refusal(self, request, obj):
        return _(
            "A statement of the register is not reverted: change the current one, and "
            "the earlier text stays public as its history."
        )

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        statement = self.get_object(request, object_id) if object_id else None
        key = statement.key if statement is not None else request.POST.get("key")
        if request.method == "POST" and statement is not None and statement.superseded_at:
            return self._refused(request, STATEMENT_CHANGED_MEANWHILE, key)
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except DomainError as refused:
            return self._refused(request, refused.message, key)

    def _refused(self, request, message, key):
        """Say why, and open the statement now current under the key (the list without one)."""
        self.message_user(request, message, messages.ERROR)
        current = disclosure_current().filter(key=key).first()
        if current is None:
            return HttpResponseRedirect(reverse("admin:governance_disclosurestatement_changelist"))
        return HttpResponseRedirect(
            reverse("admin:governance_disclosurestatement_change", args=[current.pk])
        )

    def save_model(self, request, obj, form, change):
        if not change:
            saved = disclosure_add(values=dict(form.cleaned_data), actor=request.user)
        elif form.changed_data:
            saved = disclosure_supersede(
                key=obj.key,
                changes={name: form.cleaned_data[name] for name in form.changed_data},
                actor=request.user,
                superseding=obj.pk,
            )
        else:
            return
        # The admin's message, log entry and redirect name the statement now current.
        obj.pk = saved.pk
        obj.refresh_from_db()
