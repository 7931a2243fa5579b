from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.formats import date_format
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.timezone import localtime
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import (
    TranslationAdmin,
    TranslationStackedInline,
)

from catalogue import models
from catalogue.access import HoldoutScopedAdmin, task_versions_visible
from catalogue.admin_forms import ReviewAnchorField, TaskVersionAdminForm, review_anchor_labels
from catalogue.rules import require_author_for, task_validation_checklist, task_version_hash
from catalogue.selectors import review_drafts_of, reviews_awaiting
from catalogue.services import (
    PORTAL_REVIEW_REASONS,
    review_comment_add,
    review_comment_check,
    review_comment_resolve,
    review_comment_resolve_check,
    review_open,
    task_promote,
    task_retire,
    task_version_make_current,
    task_version_start_next,
    task_version_touch,
)
from catalogue.workflows import ACTION_LABELS, REVIEW_TRANSITIONS, review_transition
from mica.admin_decisions import DecisionEventInline
from mica.admin_fields import AUTOCOMPLETE_JS
from mica.bilingual_admin import BilingualAdmin, BilingualInline
from mica.errors import DomainError, ValidationFailed
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

    # A frozen version's parts are shown, never added, changed or removed.
    def has_add_permission(self, request, obj=None):
        return not _frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not _frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not _frozen(obj) and super().has_delete_permission(request, obj)


def _frozen(version):
    return isinstance(version, models.TaskVersion) and version.frozen


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
    readonly_fields = ("content_hash", "frozen_at", "editors")
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

    # A frozen version is read-only here as in the database: its one action is a new
    # version started from it (start_next_view).
    def has_change_permission(self, request, obj=None):
        return not _frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not _frozen(obj) and super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.validation_event() is not None:
            fields += [name for name in models.REFERENCE_FIELDS if name not in fields]
        return fields

    def get_fieldsets(self, request, obj=None):
        """The references in a section of their own, which says why they are fixed once
        the version is validated and what an edit of them does before."""
        fieldsets = super().get_fieldsets(request, obj)
        references = [*models.REFERENCE_FIELDS]
        rest = [
            (name, {**options, "fields": [f for f in options["fields"] if f not in references]})
            for name, options in fieldsets
        ]
        section = (
            _("Speed and cost references"),
            {"fields": references, "description": _references_note(obj)},
        )
        return [*rest, section]

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None:
            # The rules promotion judges, as they stand for the saved version.
            context["validation_checklist"] = task_validation_checklist(obj)
            context["frozen_version"] = obj.frozen
            context["may_start_next"] = self.has_add_permission(request)
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # The hash covers clauses and applicability too, so it is taken after the inlines.
        version = task_version_touch(version=form.instance, actor=request.user)
        if version.reviews_voided:
            self.message_user(request, _voided_message(version.reviews_voided), messages.WARNING)

    def get_urls(self):
        matrix = self.admin_site.admin_view(self.translation_status_view)
        start_next = self.admin_site.admin_view(self.start_next_view)
        return [
            path("translation-status/", matrix, name="catalogue_taskversion_translation_status"),
            path(
                "<path:object_id>/start-next/",
                start_next,
                name="catalogue_taskversion_start_next",
            ),
            *super().get_urls(),
        ]

    def start_next_view(self, request, object_id):
        """POST: a draft copied from this version under the next free number, opened for
        editing. The only way to change a frozen version's text."""
        source = self.get_object(request, object_id)
        if source is None or not self.has_view_permission(request, source):
            raise PermissionDenied
        if request.method != "POST" or not self.has_add_permission(request):
            raise PermissionDenied
        try:
            draft = task_version_start_next(version_id=source.pk, actor=request.user)
        except DomainError as refusal:
            self.message_user(request, refusal.message, messages.ERROR)
            return redirect(reverse("admin:catalogue_taskversion_change", args=[source.pk]))
        self.message_user(
            request,
            gettext(
                "%(draft)s is a new draft copied from %(source)s. Edit it, then submit it "
                "for local review; %(source)s stays as it was approved."
            )
            % {"draft": draft, "source": source},
            messages.SUCCESS,
        )
        return redirect(reverse("admin:catalogue_taskversion_change", args=[draft.pk]))

    def translation_status_view(self, request):
        """Task × language × the source version each market's approved review covers."""
        # The admin's login is not enough: the page shows task versions, so it asks for
        # the permission their own list asks for.
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
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


def _references_note(version):
    """Why the references can or cannot be edited, in the editor's language."""
    event = version.validation_event() if version is not None else None
    if event is None:
        return _(
            "Pre-registered for this version and never derived from the cohort being "
            "scored. Local reviewers approve them with the rest of the version: an edit "
            "of them voids an approval. Once the version is validated they are fixed."
        )
    return gettext(
        "Fixed: this version was validated on %(date)s, and its references were "
        "pre-registered for it. Different references need a new version."
    ) % {"date": date_format(localtime(event.at), "DATE_FORMAT")}


def _voided_message(reviews):
    """What the editor is told when the save voided approvals: which, and what next."""
    names = ", ".join(review_name(review) for review in reviews)
    link = format_html(
        '<a href="{}?state__exact={}">{}</a>',
        reverse("admin:catalogue_localreview_changelist"),
        models.ReviewState.VOIDED,
        gettext("the voided reviews"),
    )
    text = gettext(
        "This edit voided the approval of %(reviews)s: the content the reviewer approved "
        "has changed. When the version is ready, resubmit the review from %(link)s "
        "(action “Resubmit for review”), and a reviewer approves the new content."
    )
    return mark_safe(escape(text) % {"reviews": escape(names), "link": link})


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
    """The two review queues of the admin's index (catalogue.selectors), as a filter."""

    title = _("my work")
    parameter_name = "mine"

    def lookups(self, request, model_admin):
        return [("review", _("Awaiting my review")), ("drafts", _("My drafts"))]

    def queryset(self, request, queryset):
        if self.value() == "review":
            return queryset.filter(pk__in=reviews_awaiting(request.user).values("pk"))
        if self.value() == "drafts":
            return queryset.filter(pk__in=review_drafts_of(request.user).values("pk"))
        return queryset


class ReviewEventInline(DecisionEventInline):
    model = models.ReviewEvent
    # Staff see who moved a review and the digest of what was approved.
    readonly_fields = (*DecisionEventInline.readonly_fields, "actor", "content_hash")
    fields = readonly_fields

    @admin.display(description=_("reason"))
    def why(self, event):
        # A reason the portal wrote (a voided approval) reads in the admin's language.
        if event.reason in PORTAL_REVIEW_REASONS:
            return gettext(event.reason)
        return super().why(event)


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


def review_name(review):
    """A review as people name it: the task version and the market's code."""
    return f"{review.version} · {review.market.code}"


# Each quotes the state the review is in after the move.
MOVE_DONE = {
    "submit": _("Submitted for review: %(review)s. It is now “%(state)s”."),
    "resubmit": _("Resubmitted for review: %(review)s. It is now “%(state)s”."),
    "request_changes": _("Changes requested on %(review)s. It is now “%(state)s”."),
    "approve": _("Approved: %(review)s. It is now “%(state)s”."),
}
REVIEW_ACTIONS_FOR_STAFF = list(
    dict.fromkeys(
        action for (_state, action), move in REVIEW_TRANSITIONS.items() if move.role != "system"
    )
)


def review_admin_action(action):
    """The admin action that applies `action` to each selected review."""

    def apply(modeladmin, request, queryset):
        return modeladmin.review_move(request, queryset, action)

    apply.__name__ = action
    return admin.action(description=capfirst(ACTION_LABELS[action]))(apply)


class ReviewCommentForm(forms.ModelForm):
    """A new comment, checked by the service that writes it; what it is about is chosen
    from a list, never typed."""

    actor = None  # set per request by the inline
    anchor = ReviewAnchorField(
        label=_("anchored to"),
        help_text=_(
            "Choose the part of the task version, or the section of the methodology, "
            "that the comment is about."
        ),
    )

    class Meta:
        model = models.ReviewComment
        fields = ["anchor", "body"]
        widgets = {"body": forms.Textarea(attrs={"rows": 3, "cols": 60})}

    def clean(self):
        cleaned = super().clean()
        if self.has_changed() and self.instance.review_id:
            try:
                review_comment_check(
                    review=self.instance.review,
                    anchor=cleaned.get("anchor"),
                    body=cleaned.get("body"),
                    actor=self.actor,
                )
            except ValidationFailed as refused:
                for field, errors in refused.field_errors.items():
                    for message in errors:
                        self.add_error(field, message)
            except DomainError as refused:
                raise forms.ValidationError(refused.message) from refused
        return cleaned


class ReviewCommentResolveForm(forms.ModelForm):
    resolve = forms.BooleanField(label=_("Mark as resolved"), required=False)
    actor = None  # set per request by the inline

    class Meta:
        model = models.ReviewComment
        fields = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.resolved:  # shown ticked: resolving is not undone
            self.fields["resolve"].initial = True
            self.fields["resolve"].disabled = True

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("resolve"):
            try:
                review_comment_resolve_check(comment=self.instance, actor=self.actor)
            except DomainError as refused:
                self.add_error("resolve", refused.message)
        return cleaned


class _CommentInline(admin.StackedInline):
    model = models.ReviewComment
    can_delete = False  # a review's discussion stays in its record

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.form = type(formset.form.__name__, (formset.form,), {"actor": request.user})
        return formset


class ReviewCommentInline(_CommentInline):
    """The comments on record, oldest first; an open one can be marked resolved."""

    form = ReviewCommentResolveForm
    extra = 0
    fields = (
        "anchored_to",
        "body",
        "author",
        "created_at",
        "resolved_at",
        "resolved_by",
        "resolve",
    )
    readonly_fields = fields[:-1]  # all but the box that resolves it
    verbose_name_plural = _("comments")

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description=_("anchored to"))
    def anchored_to(self, comment):
        # One reading of the list for the page's comments (an inline serves one request).
        if not hasattr(self, "_anchor_labels"):
            self._anchor_labels = review_anchor_labels()
        return self._anchor_labels.get(comment.anchor, comment.anchor)


class NewReviewCommentInline(_CommentInline):
    """A new comment, anchored to a field of the task version or a section id."""

    form = ReviewCommentForm
    extra = 1
    verbose_name = _("new comment")
    verbose_name_plural = _("add a comment")

    def get_queryset(self, request):
        return super().get_queryset(request).none()

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.LocalReview)
class LocalReviewAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    holdout_path = "version__definition__task_set"
    list_display = ("version", "market", "state", "updated_at")
    list_filter = (AwaitingMyReview, "state", "market")
    list_select_related = ("version__definition", "market")
    readonly_fields = ("state", "author", "reviewer", "approved_hash")
    autocomplete_fields = ("version",)

    class Media:
        js = AUTOCOMPLETE_JS

    inlines = [ReviewEventInline, ReviewCommentInline, NewReviewCommentInline]
    # Every move staff can take, from the workflow's table; voiding is the system's.
    actions = [review_admin_action(action) for action in REVIEW_ACTIONS_FOR_STAFF]

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        return fields + ["version", "market"] if obj else fields

    def get_inlines(self, request, obj):
        return self.inlines if obj is not None else []  # nothing to list before it exists

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

    def save_formset(self, request, form, formset, change):
        """Comments are written and resolved by the services, never saved directly."""
        if formset.model is not models.ReviewComment:
            return super().save_formset(request, form, formset, change)
        # What the admin's change message and history entry read.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for comment_form in formset.forms:
            if not comment_form.has_changed():
                continue
            data = comment_form.cleaned_data
            if isinstance(comment_form, ReviewCommentResolveForm):
                if data["resolve"]:
                    resolved = review_comment_resolve(
                        comment_id=comment_form.instance.pk, actor=request.user
                    )
                    formset.changed_objects.append((resolved, ["resolved"]))
            else:
                formset.new_objects.append(
                    review_comment_add(
                        review=form.instance,
                        anchor=data["anchor"],
                        body=data["body"],
                        actor=request.user,
                    )
                )
        return None

    def review_move(self, request, queryset, action):
        if action == "request_changes":
            reason = request.POST.get("reason", "")
            if request.POST.get("confirm") != "yes" or not reason.strip():
                return self._request_changes_form(request, queryset)
        else:
            reason = ""
        for review in queryset.select_related("version__definition", "market"):
            try:
                moved = review_transition(
                    review_id=review.pk, action=action, actor=request.user, reason=reason
                )
            except DomainError as refused:
                # The sentence first: the admin capitalises a message's first letter,
                # which would misspell a task id.
                self.message_user(
                    request, f"{refused.message} ({review_name(review)})", messages.ERROR
                )
            else:
                self.message_user(
                    request,
                    MOVE_DONE[action]
                    % {"review": review_name(moved), "state": moved.get_state_display()},
                    messages.SUCCESS,
                )
        return None

    def _request_changes_form(self, request, queryset):
        """The reviewer says which changes are needed: the request goes with the decision
        and to the author."""
        context = {
            **self.admin_site.each_context(request),
            "title": capfirst(ACTION_LABELS["request_changes"]),
            "reviews": [
                review_name(r) for r in queryset.select_related("version__definition", "market")
            ],
            "review_ids": list(queryset.values_list("pk", flat=True)),
            "reason_missing": request.POST.get("confirm") == "yes",
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(
            request, "admin/catalogue/localreview/request_changes.html", context
        )


@admin.register(models.ExposureEntry)
class ExposureEntryAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    holdout_path = "definition__task_set"
    list_display = ("definition", "at", "where_shown", "artifact_shown")
    list_select_related = ("definition",)
    autocomplete_fields = ("definition",)

    # The portal's own entries in the reader's words, as the task's page shows them.
    @admin.display(description=_("where"), ordering="where")
    def where_shown(self, entry):
        return gettext(entry.where)

    @admin.display(description=_("artifact"), ordering="artifact")
    def artifact_shown(self, entry):
        return gettext(entry.artifact)

    def get_fields(self, request, obj=None):
        if obj is None:
            return super().get_fields(request, obj)
        return ["definition", "at", "where_shown", "artifact_shown"]

    class Media:
        js = AUTOCOMPLETE_JS

    def has_change_permission(self, request, obj=None):
        return False  # the exposure log is append-only

    def has_delete_permission(self, request, obj=None):
        return False


class _HoldoutRecordAdmin(HoldoutScopedAdmin, admin.ModelAdmin):
    """What commits the portal to the holdout: read by holdout keepers, written only by
    the publication of an edition and a task leaving the holdout (catalogue.commitments)."""

    holdout_path = "definition__task_set"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.HoldoutSalt)
class HoldoutSaltAdmin(_HoldoutRecordAdmin):
    list_display = ("definition", "created_at", "revealed_at")
    fields = ("definition", "salt", "created_at", "revealed_at")
    readonly_fields = fields


@admin.register(models.HoldoutCommitment)
class HoldoutCommitmentAdmin(_HoldoutRecordAdmin):
    list_display = ("definition", "edition", "version", "commitment")
    list_filter = ("edition",)
    fields = ("edition", "definition", "version", "content_hash", "commitment")
    readonly_fields = fields
