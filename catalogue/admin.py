from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Q
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import (
    TranslationAdmin,
    TranslationStackedInline,
)

from catalogue import models
from catalogue.access import HoldoutScopedAdmin, task_versions_visible
from catalogue.admin_forms import TaskVersionAdminForm
from catalogue.rules import require_author_for, task_version_hash
from catalogue.services import (
    review_open,
    task_promote,
    task_retire,
    task_version_make_current,
    task_version_touch,
)
from catalogue.workflows import ACTION_LABELS, REVIEW_TRANSITIONS, review_transition
from markets.models import CompetenceRole
from markets.selectors import competent_market_codes
from mica.admin_decisions import DecisionEventInline
from mica.admin_fields import AUTOCOMPLETE_JS
from mica.bilingual_admin import BilingualAdmin, BilingualInline
from mica.errors import DomainError
from mica.history_admin import HistoryAdmin


def _report(modeladmin, request, label, call):
    """Run a service call for one record and tell the user how it went, in their language."""
    try:
        call()
    except DomainError as error:
        modeladmin.message_user(request, f"{label}: {error.message}", messages.ERROR)
        return False
    return True


def korean_review_approved_at(version_id):
    """When a local reviewer in Korea last approved the version: its Korean approval."""
    return (
        models.ReviewEvent.objects.filter(
            review__version_id=version_id, review__market__code="KR", action="approve"
        )
        .order_by("-at")
        .values_list("at", flat=True)
        .first()
    )


@admin.register(models.TaskFamily)
class TaskFamilyAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    list_display = ("position", "slug", "label", "task_prefix", "timeout_seconds")
    ordering = ("position",)


class RetirementForm(forms.Form):
    reason = forms.CharField(
        label=_("Why the task is retired"),
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
        help_text=_("Kept with the task's history; the task leaves the public catalogue."),
    )


class TaskEventInline(DecisionEventInline):
    model = models.TaskEvent
    readonly_fields = (*DecisionEventInline.readonly_fields, "version", "actor")
    fields = readonly_fields


@admin.register(models.TaskDefinition)
class TaskDefinitionAdmin(HoldoutScopedAdmin, HistoryAdmin):
    list_display = ("slug", "family", "lifecycle", "task_set", "current_version")
    list_filter = ("family", "lifecycle", "task_set")
    search_fields = ("slug", "current_version__title_en", "current_version__title_ko")
    list_select_related = ("family", "current_version")
    readonly_fields = ("lifecycle", "current_version", "created_at")
    inlines = [TaskEventInline]

    class Media:
        css = {"all": ["mica/admin-bilingual.css"]}  # its breadcrumbs and event table

    # The task's life as the workflow's table allows it (catalogue.workflows.TASK_TRANSITIONS);
    # a version is promoted or made current from the task versions' list.
    actions = ["promote", "retire"]

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # no events before the task exists

    @admin.action(description=_("Promote the selected candidates to validated"))
    def promote(self, request, queryset):
        for definition in queryset:
            if _report(
                self,
                request,
                definition.slug,
                lambda d=definition: task_promote(definition_id=d.pk, actor=request.user),
            ):
                self.message_user(request, _("%(task)s is validated.") % {"task": definition})

    @admin.action(description=_("Retire the selected tasks, with a reason"))
    def retire(self, request, queryset):
        form = RetirementForm(request.POST if "confirm" in request.POST else None)
        if not form.is_valid():
            return TemplateResponse(
                request,
                "admin/catalogue/taskdefinition/retire_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": _("Retire tasks"),
                    "opts": self.model._meta,
                    "tasks": queryset,
                    "form": form,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        reason = form.cleaned_data["reason"]
        for definition in queryset:
            if _report(
                self,
                request,
                definition.slug,
                lambda d=definition: task_retire(
                    definition_id=d.pk, actor=request.user, reason=reason
                ),
            ):
                self.message_user(request, _("%(task)s is retired.") % {"task": definition})
        return None


class TaskVersionPartInline(BilingualInline):
    """A part of a version's contract: its Korean approval is the version's."""

    extra = 0

    def korean_approval_key(self, obj):
        return obj.version_id

    def korean_approved_at(self, obj):
        return korean_review_approved_at(obj.version_id)


class ContractClauseInline(TaskVersionPartInline, TranslationStackedInline):
    model = models.ContractClause


class MarketApplicabilityInline(TaskVersionPartInline, TranslationStackedInline):
    model = models.MarketApplicability


@admin.register(models.TaskVersion)
class TaskVersionAdmin(HoldoutScopedAdmin, HistoryAdmin, BilingualAdmin, TranslationAdmin):
    holdout_path = "definition__task_set"
    form = TaskVersionAdminForm
    list_display = (
        "__str__",
        "title",
        "is_current",
        "surface",
        "termination_class",
        "declared_complexity",
        "reference_status",
    )
    list_filter = ("definition__family", "surface", "termination_class", "declared_complexity")
    search_fields = ("definition__slug", "title_en", "title_ko")
    list_select_related = ("definition",)
    readonly_fields = ("content_hash", "editors")
    autocomplete_fields = ("definition",)
    inlines = [ContractClauseInline, MarketApplicabilityInline]

    class Media:
        css = BilingualAdmin.Media.css
        js = AUTOCOMPLETE_JS

    actions = ["promote_task", "make_current"]

    @admin.display(boolean=True, description=_("current"))
    def is_current(self, obj):
        return obj.definition.current_version_id == obj.pk

    def korean_approved_at(self, obj):
        return korean_review_approved_at(obj.pk)

    def _one_version(self, request, queryset):
        if queryset.count() != 1:
            self.message_user(request, _("Select exactly one task version."), messages.ERROR)
            return None
        return queryset.get()

    @admin.action(description=_("Promote the task to validated on the selected version"))
    def promote_task(self, request, queryset):
        version = self._one_version(request, queryset)
        if version and _report(
            self,
            request,
            str(version),
            lambda: task_promote(
                definition_id=version.definition_id, actor=request.user, version_id=version.pk
            ),
        ):
            self.message_user(request, _("%(task)s is validated.") % {"task": version.definition})

    @admin.action(description=_("Make the selected version current (its public page)"))
    def make_current(self, request, queryset):
        version = self._one_version(request, queryset)
        if version and _report(
            self,
            request,
            str(version),
            lambda: task_version_make_current(version_id=version.pk, actor=request.user),
        ):
            self.message_user(request, _("%(version)s is now current.") % {"version": version})

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # The hash covers clauses and applicability too, so it is taken after the inlines.
        task_version_touch(version=form.instance, actor=request.user)

    def get_urls(self):
        matrix = self.admin_site.admin_view(self.translation_status_view)
        return [
            path("translation-status/", matrix, name="catalogue_taskversion_translation_status"),
            *super().get_urls(),
        ]

    def translation_status_view(self, request):
        """Task × language × the source version each market's approved review covers."""
        versions = (
            task_versions_visible(request.user)
            .filter(definition__current_version__isnull=False)
            .select_related("definition")
            .prefetch_related("clauses", "applicability__market", "reviews__market")
            .order_by("definition__family__position", "definition__position")
        )
        rows = [
            _translation_row(version)
            for version in versions
            if version.definition.current_version_id == version.pk
        ]
        return TemplateResponse(
            request,
            "admin/catalogue/translation_status.html",
            {
                **self.admin_site.each_context(request),
                "title": _("Translation status"),
                "rows": rows,
                "opts": self.model._meta,
            },
        )


def _complete(version, language):
    fields = ("title", "final_state", "confirmation_boundary")
    return (
        all(getattr(version, f"{f}_{language}") for f in fields)
        and all(getattr(c, f"text_{language}") for c in version.clauses.all())
        and all(getattr(a, f"note_{language}") for a in version.applicability.all())
    )


def _translation_row(version):
    current = task_version_hash(version)
    approved = sorted(
        review.market.code
        for review in version.reviews.all()
        if review.state == models.ReviewState.APPROVED and review.approved_hash == current
    )
    return {
        "version": version,
        "en": _complete(version, "en"),
        "ko": _complete(version, "ko"),
        "reviewed_markets": approved,
    }


class AwaitingMyReview(admin.SimpleListFilter):
    title = _("my work")
    parameter_name = "mine"

    def lookups(self, request, model_admin):
        return [("review", _("Awaiting my review")), ("drafts", _("My drafts"))]

    def queryset(self, request, queryset):
        if self.value() == "review":
            markets = competent_market_codes(
                request.user, roles=[CompetenceRole.REVIEWER, CompetenceRole.LEAD]
            )
            return queryset.filter(
                state=models.ReviewState.IN_REVIEW, market__code__in=markets
            ).exclude(Q(author=request.user) | Q(version__editors=request.user))
        if self.value() == "drafts":
            return queryset.filter(
                author=request.user,
                state__in=[models.ReviewState.DRAFT, models.ReviewState.CHANGES_REQUESTED],
            )
        return queryset


class ReviewEventInline(DecisionEventInline):
    model = models.ReviewEvent
    # Staff see who moved a review and the digest of what was approved.
    readonly_fields = (*DecisionEventInline.readonly_fields, "actor", "content_hash")
    fields = readonly_fields


class LocalReviewOpenForm(forms.ModelForm):
    """Opening a review: the requesting author must be competent for the market."""

    class Meta:
        model = models.LocalReview
        fields = ["version", "market"]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("version") and cleaned.get("market"):
            draft = models.LocalReview(
                version=cleaned["version"], market=cleaned["market"], author=self.author
            )
            try:
                require_author_for(draft, self.author)
            except DomainError as error:
                raise forms.ValidationError(error.message) from error
            if models.LocalReview.objects.filter(
                version=cleaned["version"],
                market=cleaned["market"],
                state__in=models.OPEN_REVIEW_STATES,
            ).exists():
                raise forms.ValidationError(
                    _("This version already has an open review in %(market)s.")
                    % {"market": cleaned["market"].code}
                )
        return cleaned


MOVE_DONE = {
    "submit": _("%(review)s was submitted."),
    "request_changes": _("Changes were requested on %(review)s."),
    "approve": _("%(review)s is approved."),
}
REVIEW_ACTIONS_FOR_STAFF = list(
    dict.fromkeys(
        action for (_state, action), move in REVIEW_TRANSITIONS.items() if move.role != "system"
    )
)


def review_admin_action(action):
    """The admin action that applies `action` to each selected review."""

    def apply(modeladmin, request, queryset):
        modeladmin.review_move(request, queryset, action)

    apply.__name__ = action
    return admin.action(description=capfirst(ACTION_LABELS[action]))(apply)


@admin.register(models.LocalReview)
class LocalReviewAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    holdout_path = "version__definition__task_set"
    list_display = ("version", "market", "state", "updated_at")
    list_filter = (AwaitingMyReview, "state", "market")
    list_select_related = ("version__definition", "market")
    readonly_fields = ("state", "author", "reviewer", "approved_hash")
    autocomplete_fields = ("version",)

    class Media:
        css = BilingualAdmin.Media.css  # the breadcrumbs' underline
        js = AUTOCOMPLETE_JS

    inlines = [ReviewEventInline]
    # Every move staff can take, from the workflow's table; voiding is the system's.
    actions = [review_admin_action(action) for action in REVIEW_ACTIONS_FOR_STAFF]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return fields + ["version", "market"] if obj else fields

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # no events before the review exists

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = LocalReviewOpenForm
        form = super().get_form(request, obj, **kwargs)
        form.author = request.user
        return form

    def save_model(self, request, obj, form, change):
        if change:
            return  # a review changes only through its actions
        created = review_open(version=obj.version, market=obj.market, actor=request.user)
        obj.pk, obj.author_id, obj.state = created.pk, created.author_id, created.state

    def review_move(self, request, queryset, action):
        for review in queryset:
            if _report(
                self,
                request,
                str(review),
                lambda r=review: review_transition(
                    review_id=r.pk, action=action, actor=request.user
                ),
            ):
                self.message_user(request, MOVE_DONE[action] % {"review": review})


@admin.register(models.ExposureEntry)
class ExposureEntryAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    holdout_path = "definition__task_set"
    list_display = ("definition", "at", "where", "artifact")
    list_select_related = ("definition",)
    autocomplete_fields = ("definition",)

    class Media:
        css = BilingualAdmin.Media.css  # the breadcrumbs' underline
        js = AUTOCOMPLETE_JS

    def has_change_permission(self, request, obj=None):
        return False  # the exposure log is append-only

    def has_delete_permission(self, request, obj=None):
        return False
