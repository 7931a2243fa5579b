from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from modeltranslation.admin import TranslationAdmin

from mica.bilingual_admin import BilingualAdmin
from mica.errors import DomainError
from mica.history_admin import HistoryAdmin
from mica.methodology import models
from mica.methodology.selectors import claim_korean_is_approved, claims_korean_stale
from mica.methodology.services import (
    claim_korean_approve,
    edition_draft_start_or_open,
    edition_publication_preview,
    edition_publish,
    section_record_errors,
)


class SectionRecordForm(forms.ModelForm):
    """Refuses unknown placeholders, a section id used twice, or a missing reference key."""

    def clean(self):
        cleaned = super().clean()
        record = self.instance
        for name, value in cleaned.items():
            if name in {f.name for f in record._meta.fields} and name != "id":
                setattr(record, name, value)
        for field, errors in section_record_errors(record).items():
            for message in errors:
                self.add_error(field if field in self.fields else None, message)
        return cleaned


class DraftOnlyAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    """Records of a published edition are read-only: changes ship as a new edition."""

    form = SectionRecordForm
    history_edition_path = "edition"
    list_filter = ("edition",)

    def _draft(self, obj):
        return obj is None or obj.edition.status == models.EditionStatus.DRAFT

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._draft(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._draft(obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "edition":
            kwargs["queryset"] = models.Edition.objects.filter(status=models.EditionStatus.DRAFT)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(models.Edition)
class EditionAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin):
    history_edition_path = "."  # a published edition's history is read, never reverted
    list_display = (
        "version_label",
        "slug",
        "status",
        "published_on",
        "min_eligible_runs",
        "min_coverage",
    )
    list_filter = ("status",)
    search_fields = ("slug", "version_label_en", "version_label_ko")
    readonly_fields = ("status",)
    exclude = ("pack_texts",)
    actions = ["start_draft", "publish"]

    @admin.action(description=_("Start a new draft edition from the selected edition"))
    def start_draft(self, request, queryset):
        """Opens the draft: the one started now under the next free edition number, or the
        one already under way after the selected edition (a second click makes no other)."""
        source = queryset.order_by("pk").first()
        if source is None:
            return None
        draft, started = edition_draft_start_or_open(source=source)
        if started:
            message = _("Draft %(edition)s (%(slug)s) started.")
        else:
            message = _(
                "A draft already follows %(source)s: %(edition)s (%(slug)s), opened here. "
                "Publish it before starting another."
            )
        self.message_user(
            request, message % {"edition": draft, "slug": draft.slug, "source": source}
        )
        return HttpResponseRedirect(reverse("admin:methodology_edition_change", args=[draft.pk]))

    @admin.action(description=_("Publish the selected draft edition"))
    def publish(self, request, queryset):
        """Publishing freezes the edition for good: a page says what, and asks first."""
        if queryset.count() != 1:
            self.message_user(
                request, _("Select exactly one draft edition to publish."), messages.ERROR
            )
            return None
        edition = queryset.get()
        if request.POST.get("confirm") != "yes":
            frozen, refusals = edition_publication_preview(edition)
            context = {
                **self.admin_site.each_context(request),
                "title": _("Publish %(edition)s?") % {"edition": edition},
                "edition": edition,
                "frozen": frozen,
                "refusals": refusals,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            }
            return TemplateResponse(
                request, "admin/methodology/edition/publish_confirmation.html", context
            )
        try:
            edition_publish(edition_id=edition.pk, actor=request.user)
        except DomainError as refused:
            reasons = "; ".join(str(m) for ms in refused.field_errors.values() for m in ms)
            self.message_user(request, f"{refused.message} {reasons}"[:2000], messages.ERROR)
        else:
            edition.refresh_from_db()
            self.message_user(request, _("%(edition)s is published.") % {"edition": edition})
        return None

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or obj.status == models.EditionStatus.DRAFT)


@admin.register(models.Chapter)
class ChapterAdmin(DraftOnlyAdmin):
    list_display = ("number", "section_id", "title", "body", "edition")
    ordering = ("edition", "position")
    search_fields = ("section_id", "title_en", "title_ko")


class KoreanApproval(admin.SimpleListFilter):
    title = _("Korean text")
    parameter_name = "korean"

    def lookups(self, request, model_admin):
        return [("stale", _("Approved, then edited (stale)"))]

    def queryset(self, request, queryset):
        if self.value() == "stale":
            return queryset.filter(pk__in=claims_korean_stale())
        return queryset


@admin.register(models.ChapterItem)
class ChapterItemAdmin(DraftOnlyAdmin):
    list_display = ("section_id", "item_type", "kind", "term", "chapter", "korean_approved")
    list_filter = (KoreanApproval, "edition", "item_type", "kind", "chapter")
    list_select_related = ("chapter", "edition")
    search_fields = ("section_id", "term_en", "term_ko", "detail_en", "detail_ko")
    readonly_fields = ("korean_approved_by", "korean_approved_at")
    actions = ["approve_korean"]

    @admin.display(boolean=True, description=_("Korean approved"))
    def korean_approved(self, obj):
        return claim_korean_is_approved(obj)

    @admin.action(
        description=_(
            "Approve the Korean text against the current English source "
            "(a reviewer competent in Korean who edited neither)"
        )
    )
    def approve_korean(self, request, queryset):
        approved = 0
        for item in queryset.select_related("edition"):
            try:
                claim_korean_approve(item=item, actor=request.user)
                approved += 1
            except DomainError as refused:
                self.message_user(request, refused.message, messages.ERROR)
        if approved:
            self.message_user(
                request, _("Korean text approved for %(count)d records.") % {"count": approved}
            )


@admin.register(models.ReferenceGroup)
class ReferenceGroupAdmin(DraftOnlyAdmin):
    list_display = ("section_id", "title", "chapter")
    list_select_related = ("chapter", "edition")


@admin.register(models.Reference)
class ReferenceAdmin(DraftOnlyAdmin):
    list_display = ("key", "title", "group", "work_type", "issued", "accessed_on")
    list_filter = ("edition", "group", "work_type")
    list_select_related = ("group", "edition")
    search_fields = ("key", "title_en", "section_id")


@admin.register(models.GlossaryTerm)
class GlossaryTermAdmin(DraftOnlyAdmin):
    list_display = ("section_id", "term")
    search_fields = ("section_id", "term_en", "term_ko")


@admin.register(models.ContractSection)
class ContractSectionAdmin(DraftOnlyAdmin):
    list_display = ("number", "section_id", "title")


@admin.register(models.ContractItem)
class ContractItemAdmin(DraftOnlyAdmin):
    list_display = ("section_id", "term", "contract_section")
    list_select_related = ("contract_section", "edition")


@admin.register(models.PolicyLine)
class PolicyLineAdmin(DraftOnlyAdmin):
    list_display = ("section_id", "term")


@admin.register(models.ReadingKind)
class ReadingKindAdmin(DraftOnlyAdmin):
    list_display = ("kind", "label", "section_id")


@admin.register(models.LanguageCompetence)
class LanguageCompetenceAdmin(admin.ModelAdmin):
    """Who may review a translation into a language: granted by the method lead."""

    list_display = ("user", "language", "verified_by", "valid_until")
    list_filter = ("language",)
    list_select_related = ("user", "verified_by")

    def has_module_permission(self, request):
        return request.user.is_superuser

    def has_view_permission(self, request, obj=None):
        return request.user.is_superuser
