from django import forms
from django.contrib import admin, messages
from django.db.models import BooleanField, Case, When
from django.template.response import TemplateResponse
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timesince import timesince
from django.utils.timezone import localtime
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from catalogue.access import HoldoutScopedAdmin
from mica.admin_decisions import DecisionAdmin, DecisionEventInline, event_reason
from mica.admin_text import structured_field, written_field
from mica.errors import DomainError
from mica.text import is_blank
from submissions import models
from submissions.challenges import CHALLENGE_TRANSITIONS, challenge_transition
from submissions.invalidation import attempt_invalidate, invalidation_reverse
from submissions.selectors import challenges_on_claims_of, challenges_on_unowned_claims
from submissions.system_submissions import SUBMISSION_TRANSITIONS, system_submission_decide


@admin.register(models.System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "operator", "operator_account")
    search_fields = ("name", "slug", "operator")

    def get_readonly_fields(self, request, obj=None):
        # A system's slug is its address in links, exports and attempt records: once
        # given, it never changes.
        return ("slug",) if obj is not None else ()


@admin.register(models.SystemSnapshot)
class SystemSnapshotAdmin(admin.ModelAdmin):
    """A snapshot is immutable: a change is a new snapshot, never an edit."""

    list_display = ("system", "version", "snapshot_date", "track", "data_status")
    list_filter = ("track", "data_status")
    list_select_related = ("system",)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return [field.name for field in obj._meta.fields]

    def has_delete_permission(self, request, obj=None):
        return False


class RecordInline(admin.TabularInline):
    """Part of an attempt's record: shown, never added, changed or deleted here."""

    extra = 0
    can_delete = False

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class InvocationInline(RecordInline):
    model = models.ModelInvocation


class EvidenceInline(RecordInline):
    model = models.EvidenceRecord


class AttemptInvalidationInline(DecisionEventInline):
    model = models.AttemptInvalidation
    readonly_fields = (*DecisionEventInline.readonly_fields, "actor", "reversed")
    fields = readonly_fields

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("reversal")

    @admin.display(description=_("reversed"))
    def reversed(self, obj):
        reversal = getattr(obj, "reversal", None)
        if reversal is None:
            return "—"
        return f"{reversal.at:%Y-%m-%d} · {reversal.reason}"


def _on(decision):
    return date_format(localtime(decision.at), "DATETIME_FORMAT")


@admin.register(models.Attempt)
class AttemptAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    """Attempts arrive through ingestion only, where every rule is checked, and are never
    changed or deleted: invalidating one is a recorded decision with its reason."""

    holdout_path = "task_version__definition__task_set"
    list_display = (
        "attempt_id",
        "snapshot",
        "market",
        "family",
        "outcome",
        "eligible",
        "invalid_reason",
        "verification",
        "critical_safety_event",
        "invalidated",
    )
    list_filter = ("market", "family", "outcome", "eligible", "verification", "data_status")
    # The change page is read-only: this line says which decision on the attempt stands.
    readonly_fields = ("decision_in_force",)
    search_fields = ("attempt_id",)
    list_select_related = ("snapshot__system", "market", "family")
    inlines = [AttemptInvalidationInline, InvocationInline, EvidenceInline]
    actions = ["invalidate", "reverse_invalidation"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                invalidation_in_force=Case(
                    When(models.INVALIDATED, then=True),
                    default=False,
                    output_field=BooleanField(),
                )
            )
        )

    @admin.display(description=pgettext_lazy("decision", "invalidated"), boolean=True)
    def invalidated(self, obj):
        """Whether the latest decision on the attempt is an invalidation."""
        return obj.invalidation_in_force

    @admin.display(description=_("decision in force"))
    def decision_in_force(self, obj):
        """The latest of the attempt's invalidations and reversals, which the figures
        follow; the inline below lists every one of them."""
        latest = obj.invalidation
        if latest is None:
            return _("None: the attempt was never invalidated.")
        reversal = getattr(latest, "reversal", None)
        if reversal is None:
            said = _("Invalidated on %(date)s: the attempt does not count.")
            decision = latest
        else:
            said = _("Invalidation reversed on %(date)s: the attempt is no longer invalidated.")
            decision = reversal
        return format_html("{} {}", said % {"date": _on(decision)}, event_reason(decision))

    def get_actions(self, request):
        # The admin's own bulk delete is not offered: nothing deletes an attempt.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description=_("Invalidate the selected attempts"))
    def invalidate(self, request, queryset):
        return self._decided(
            request,
            queryset,
            title=_("Invalidate attempts"),
            template="admin/submissions/attempt/invalidate_confirmation.html",
            decide=attempt_invalidate,
            done=_("%(attempt)s is invalidated."),
        )

    @admin.action(description=_("Reverse the invalidation of the selected attempts"))
    def reverse_invalidation(self, request, queryset):
        """A later decision with its reason: the invalidation stays in the record."""
        return self._decided(
            request,
            queryset,
            title=_("Reverse invalidations"),
            template="admin/submissions/attempt/reverse_invalidation_confirmation.html",
            decide=invalidation_reverse,
            done=_("%(attempt)s counts again."),
        )

    def _decided(self, request, queryset, *, title, template, decide, done):
        """A staff decision on each selected attempt, asked for its reason on a page of
        its own first; each attempt's outcome is said apart."""
        reason = request.POST.get("reason", "")
        if request.POST.get("confirm") != "yes" or is_blank(reason):
            context = {
                **self.admin_site.each_context(request),
                "title": title,
                "attempts": queryset,
                "reason_missing": request.POST.get("confirm") == "yes",
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(request, template, context)
        for attempt in queryset:
            try:
                decide(attempt_id=attempt.pk, reason=reason, actor=request.user)
            except DomainError as refused:
                self.message_user(request, f"{attempt}: {refused.message}", messages.ERROR)
            else:
                self.message_user(request, done % {"attempt": attempt})
        return None


class ChallengeDecisionForm(forms.ModelForm):
    """Editors decide through the workflow: an action and its public reason."""

    decision = forms.ChoiceField(
        label=_("Decision"),
        required=False,
        choices=[
            ("", "—"),
            ("screen", _("Screen (make public)")),
            ("triage", _("Triage")),
            ("accept", _("Accept and correct")),
            ("hold", _("Hold for the next edition")),
            ("reject", _("Reject")),
        ],
    )
    reason = forms.CharField(label=_("Public reason"), required=False, widget=forms.Textarea)
    correction_en = forms.CharField(
        label=_("Correction (English), when accepting"), required=False, widget=forms.Textarea
    )
    correction_ko = forms.CharField(
        label=_("Correction (Korean), when accepting"), required=False, widget=forms.Textarea
    )

    class Meta:
        model = models.Challenge
        fields = []


class OnClaimsIOwn(admin.SimpleListFilter):
    title = _("my work")
    parameter_name = "mine"

    def lookups(self, request, model_admin):
        lookups = [("owned", _("Open challenges on claims I own"))]
        if request.user.is_superuser:
            lookups.append(("unowned", _("Open challenges on claims without an owner")))
        return lookups

    def queryset(self, request, queryset):
        if self.value() == "owned":
            return queryset.filter(pk__in=challenges_on_claims_of(request.user).values("pk"))
        if self.value() == "unowned" and request.user.is_superuser:
            return queryset.filter(pk__in=challenges_on_unowned_claims().values("pk"))
        return queryset


class ChallengeEventInline(DecisionEventInline):
    model = models.ChallengeEvent


@admin.register(models.Challenge)
class ChallengeAdmin(DecisionAdmin):
    """The triage queue: oldest first, with each challenge's age."""

    form = ChallengeDecisionForm
    transitions = CHALLENGE_TRANSITIONS
    decision_roles = {"editor", "method-lead"}  # withdrawing is the challenger's
    list_display = ("__str__", "challenge_type", "state", "age", "email_confirmed_at")
    list_filter = (OnClaimsIOwn, "state", "challenge_type")
    ordering = ("received_at",)
    readonly_fields = (
        "edition",
        "section_id",
        "challenge_type",
        "what_is_wrong_as_written",
        "proposed_replacement_as_written",
        "evidence_as_data",
        "recompute_as_data",
        "public_name",
        "language",
        "state",
        "email_confirmed_at",
        "received_at",
    )
    inlines = [ChallengeEventInline]
    # The challenger's words, in the language they filed in.
    what_is_wrong_as_written = written_field(
        "what_is_wrong", _("what is wrong"), lambda challenge: challenge.language
    )
    proposed_replacement_as_written = written_field(
        "proposed_replacement", _("what should replace it"), lambda challenge: challenge.language
    )
    evidence_as_data = structured_field("evidence", _("evidence"))
    recompute_as_data = structured_field("recompute", _("recomputed figure"))

    @admin.display(description=_("age"), ordering="received_at")
    def age(self, obj):
        return timesince(obj.received_at)

    def decide(self, request, obj, decision, data):
        challenge_transition(
            challenge_id=obj.pk,
            action=decision,
            reason=data.get("reason", ""),
            actor=request.user,
            correction={"en": data.get("correction_en"), "ko": data.get("correction_ko")},
        )


class SystemSubmissionDecisionForm(forms.ModelForm):
    decision = forms.ChoiceField(
        label=_("Decision"),
        required=False,
        choices=[("", "—"), ("accept", _("Accept for evaluation")), ("decline", _("Decline"))],
    )
    reason = forms.CharField(label=_("Reason"), required=False, widget=forms.Textarea)

    class Meta:
        model = models.SystemSubmission
        fields = []


# The operator's declarations as written, in the language they filed in; lists as data.
SUBMISSION_COLUMNS = {
    "routable_models": "routable_models_as_data",
    "tools": "tools_as_data",
    "markets": "markets_as_data",
    "families": "families_as_data",
    "market_capability": "market_capability_as_data",
    "memory": "memory_as_written",
    "access": "access_as_written",
    "evidence_plan": "evidence_plan_as_written",
    "decision_reason": "decision_reason_as_written",
}


@admin.register(models.SystemSubmission)
class SystemSubmissionAdmin(DecisionAdmin):
    form = SystemSubmissionDecisionForm
    transitions = SUBMISSION_TRANSITIONS
    list_display = ("__str__", "operator", "state", "received_at")
    list_filter = ("state",)
    readonly_fields = [
        *(
            SUBMISSION_COLUMNS.get(f.name, f.name)
            for f in models.SystemSubmission._meta.fields
            if f.name != "id"
        ),
        "decision_events",
    ]
    routable_models_as_data = structured_field("routable_models", _("every routable model"))
    tools_as_data = structured_field("tools", _("tools and APIs"))
    markets_as_data = structured_field("markets", _("markets in scope"))
    families_as_data = structured_field("families", _("task families in scope"))
    market_capability_as_data = structured_field(
        "market_capability", _("market execution capability")
    )
    memory_as_written = written_field("memory", _("memory behaviour"), lambda s: s.language)
    access_as_written = written_field("access", _("access"), lambda s: s.language)
    evidence_plan_as_written = written_field(
        "evidence_plan", _("evidence-trace plan"), lambda s: s.language
    )
    decision_reason_as_written = written_field("decision_reason", _("reason"))

    def decide(self, request, obj, decision, data):
        system_submission_decide(
            submission_id=obj.pk,
            accept=decision == "accept",
            reason=data.get("reason", ""),
            actor=request.user,
        )


@admin.register(models.OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    list_display = ("recipient", "subject_as_written", "state", "attempts", "created_at", "sent_at")
    list_filter = ("state",)
    # An e-mail as it was written, in its reader's language; the mail server's own words.
    readonly_fields = fields = [
        {"to": "recipient", "subject": "subject_as_written", "body": "body_as_written"}.get(
            f.name, f.name
        )
        for f in models.OutboxMessage._meta.fields
        if f.name not in ("id", "last_error")
    ] + ["last_error_as_written"]
    subject_as_written = written_field("subject", _("subject"))
    body_as_written = written_field("body", pgettext_lazy("e-mail", "body"))
    last_error_as_written = written_field("last_error", _("last error"))

    # "to" alone is a workflow's state it moves to; here it is who the e-mail goes to.
    @admin.display(description=pgettext_lazy("e-mail", "to"), ordering="to")
    def recipient(self, message):
        return message.to

    def has_add_permission(self, request):
        return False
