from django import forms
from django.contrib import admin
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import TranslationAdmin

from governance.models import Appeal, GateCell, PersonDeclaration, Withdrawal
from governance.services import APPEAL_TRANSITIONS, appeal_decide
from mica.admin_decisions import DecisionAdmin
from mica.bilingual_admin import BilingualAdmin
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
        "grounds",
        "state",
        "decided_role",
        "decided_reason",
        "received_at",
        "decided_at",
        "decision_events",
    )

    # The stored reason is shown, not bound: a read-only "reason" would drop the form's
    # own field of that name, and every decision would be refused for want of a reason.
    @admin.display(description=_("reason given"))
    def decided_reason(self, obj):
        return obj.reason

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
