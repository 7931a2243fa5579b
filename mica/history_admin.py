"""The admin's view of a content record's history: revisions, a comparison, a revert.

`HistoryAdmin` goes first among the bases of a content record's admin, before
modeltranslation's `TranslationAdmin` (or any other ModelAdmin):

    class ChapterAdmin(HistoryAdmin, TranslationAdmin): ...

It builds on simple-history's `SimpleHistoryAdmin` (its URL for one revision and its
recording of the editor on save) and replaces its pages:

- History: every revision, numbered from 1 (the oldest), with who saved it, when, the
  change reason and the fields it changed; a form to compare any two of them.
- Compare: two revisions field by field, each translated field's English and Korean
  rows together, the changed words marked.
- Revision: the change form filled with that revision's content. Reverting saves it as
  a new revision, through the admin's form, `save_model` and `save_related`, so the
  same validation, model rules and follow-up work apply as to any edit; the fields the
  form does not edit (workflow states, approvals, hashes) keep their current values.

A record that must not change is never reverted: the revert button is not offered and
a POST is refused with the reason (a published edition, a frozen registration, no
permission). A refusal raised while saving (`DomainError`) is shown the same way.
"""

import difflib
import json
import re

from django.conf import settings
from django.contrib import messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import flatten_fieldsets, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import models, transaction
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import formats
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from simple_history.admin import SimpleHistoryAdmin

from mica.errors import DomainError

REVERT_REASON = "Reverted to revision {number}"
REVERT_REASON_RE = re.compile(r"^Reverted to revision (\d+)$")
WORDS_RE = re.compile(r"\s+|\w+|[^\w\s]")


def _language_names():
    return {code: _(name) for code, name in settings.LANGUAGES}


def history_action(record):
    actions = {
        "+": pgettext("history", "Created"),
        "~": pgettext("history", "Changed"),
        "-": pgettext("history", "Deleted"),
    }
    return actions.get(record.history_type, "")


def history_reason(record):
    """The change reason in the reader's language (a revert's reason is stored in English)."""
    reason = record.history_change_reason or ""
    match = REVERT_REASON_RE.match(reason)
    if match:
        return _("Reverted to revision %(number)s") % {"number": match.group(1)}
    return reason


class HistoryField:
    """One column of a record's history, labelled for a person; `language` for a translation."""

    def __init__(self, field, label, language=None, language_name=None, group=None):
        self.field = field
        self.name = field.name
        self.group = group or field.name
        self.label = label
        self.language = language
        self.language_name = language_name

    def raw(self, record):
        """The stored value; a text left empty reads the same whether stored as NULL or ''."""
        value = getattr(record, self.field.attname)
        if value is None and isinstance(self.field, models.CharField | models.TextField):
            return ""
        return value

    def display(self, record):
        """The value as text: choices by label, related records by name, JSON as JSON."""
        value = self.raw(record)
        field = self.field
        if value is None or value == "":
            return ""
        if field.is_relation:
            related = field.related_model._default_manager.filter(pk=value).first()
            if related is None:
                return _("deleted record %(id)s") % {"id": value}
            return str(related)
        if field.choices:
            return str(dict(field.flatchoices).get(value, value))
        if isinstance(field, models.BooleanField):
            return _("Yes") if value else _("No")
        if isinstance(field, models.JSONField):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(field, models.DateTimeField | models.DateField):
            return formats.localize(value)
        return str(value)


def words_marked(old, new):
    """Both texts as HTML, the words only the old one has in <del>, only the new one in <ins>."""
    before, after = WORDS_RE.findall(old), WORDS_RE.findall(new)
    old_html, new_html = [], []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for operation, i1, i2, j1, j2 in matcher.get_opcodes():
        removed, added = "".join(before[i1:i2]), "".join(after[j1:j2])
        if operation == "equal":
            old_html.append(escape(removed))
            new_html.append(escape(added))
            continue
        if removed:
            old_html.append(format_html("<del>{}</del>", removed))
        if added:
            new_html.append(format_html("<ins>{}</ins>", added))
    return mark_safe("".join(old_html)), mark_safe("".join(new_html))


class HistoryAdmin(SimpleHistoryAdmin):
    object_history_template = "admin/history/object_history.html"
    object_history_form_template = "admin/history/revision_form.html"
    history_compare_template = "admin/history/compare.html"
    history_list_per_page = 100
    # Where the record's edition is ("edition", "market_edition__edition"; "." for an
    # edition itself): records of an edition that is not a draft are never reverted.
    history_edition_path = None

    # --- which revisions, which fields ---------------------------------------------------

    def history_fields(self):
        """Every column a person edits, in the model's order; a translation per language."""
        kept = {field.name for field in self.model.history.model._meta.fields}
        languages = _language_names()
        fields = []
        for field in self.model._meta.fields:
            if field.primary_key or not field.editable or field.name not in kept:
                continue
            source = getattr(field, "translated_field", None)
            if source is not None:
                fields.append(
                    HistoryField(
                        field,
                        str(capfirst(source.verbose_name)),
                        field.language,
                        str(languages.get(field.language, field.language)),
                        group=source.name,
                    )
                )
            else:
                fields.append(HistoryField(field, str(capfirst(field.verbose_name))))
        return fields

    def history_revisions(self, object_id):
        """The record's revisions, oldest first, each numbered from 1."""
        history = self.model.history.model
        pk_name = self.model._meta.pk.attname
        revisions = list(
            history._default_manager.filter(**{pk_name: object_id})
            .select_related("history_user")
            .order_by("history_date", "history_id")
        )
        for number, revision in enumerate(revisions, start=1):
            revision.number = number
            revision.action = history_action(revision)
            revision.reason = history_reason(revision)
        return revisions

    def _history_object(self, request, object_id):
        """The record (within what this editor may see), or its last revision once deleted."""
        object_id = unquote(object_id)
        obj = self.get_object(request, object_id)
        if obj is None:
            try:
                hidden = self.model._default_manager.filter(pk=object_id).exists()
            except (ValueError, ValidationError) as malformed:
                raise Http404 from malformed
            if hidden:
                raise Http404  # outside what this editor may see
            if not request.user.is_superuser:
                raise Http404  # a deleted record's history is the method lead's to read
            last = self.history_revisions(object_id)
            if not last:
                raise Http404
            obj = last[-1].instance
            obj._history_deleted = True
        if not self.has_view_history_or_change_history_permission(request, obj):
            raise PermissionDenied
        return obj

    # --- may it be reverted --------------------------------------------------------------

    def history_edition(self, obj):
        path = self.history_edition_path
        if path is None:
            return None
        if path == ".":
            return obj
        for part in path.split("__"):
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        return obj

    def history_refusal(self, request, obj):
        """Why `obj` may not be reverted, in the editor's language; None when it may."""
        if getattr(obj, "_history_deleted", False):
            return _("This record was deleted; its history can be read but not restored here.")
        edition = self.history_edition(obj)
        if edition is not None:
            stored = type(edition)._default_manager.filter(pk=edition.pk).first()
            if stored is not None and stored.status != "draft":
                return _(
                    "Edition %(edition)s is published and cannot change; "
                    "changes go into a new edition."
                ) % {"edition": stored}
        if not self.has_change_permission(request, obj):
            return _("You may read the history of this record but not change it.")
        return None

    def revert_disabled(self, request, obj=None):
        return obj is None or self.history_refusal(request, obj) is not None

    # --- pages ---------------------------------------------------------------------------

    def get_urls(self):
        opts = self.model._meta
        compare = path(
            "<path:object_id>/history/compare/",
            self.admin_site.admin_view(self.history_compare_view),
            name=f"{opts.app_label}_{opts.model_name}_history_compare",
        )
        # Before simple-history's "<id>/history/<revision>/", which would take "compare".
        return [compare, *super().get_urls()]

    def _history_context(self, request, obj, title):
        opts = self.model._meta
        return {
            **self.admin_site.each_context(request),
            "title": title,
            "subtitle": None,
            "opts": opts,
            "app_label": opts.app_label,
            "module_name": capfirst(opts.verbose_name_plural),
            "object": obj,
            "original": obj,
            "deleted": getattr(obj, "_history_deleted", False),
            "history_url": reverse(
                f"admin:{opts.app_label}_{opts.model_name}_history", args=[obj.pk]
            ),
            "compare_url": reverse(
                f"admin:{opts.app_label}_{opts.model_name}_history_compare", args=[obj.pk]
            ),
        }

    def _changed_labels(self, fields, older, newer):
        labels = []
        for field in fields:
            if field.raw(older) != field.raw(newer):
                label = field.label
                if field.language:
                    label = f"{label} ({field.language_name})"
                labels.append(label)
        return labels

    def history_view(self, request, object_id, extra_context=None):
        request.current_app = self.admin_site.name
        obj = self._history_object(request, object_id)
        revisions = self.history_revisions(obj.pk)
        fields = self.history_fields()
        for older, newer in zip(revisions, revisions[1:], strict=False):
            newer.changed = self._changed_labels(fields, older, newer)
        newest_first = list(reversed(revisions))
        paginator = Paginator(newest_first, self.history_list_per_page)
        page = paginator.get_page(request.GET.get("p"))
        opts = self.model._meta
        for revision in page.object_list:
            revision.url = reverse(
                f"admin:{opts.app_label}_{opts.model_name}_simple_history",
                args=[obj.pk, revision.history_id],
            )
        context = {
            **self._history_context(request, obj, _("History of %(record)s") % {"record": obj}),
            "revisions": newest_first,
            "page_obj": page,
            "page_range": paginator.get_elided_page_range(page.number),
            "pagination_required": paginator.num_pages > 1,
            "refusal": self.history_refusal(request, obj),
            "default_old": revisions[-2].number if len(revisions) > 1 else 1,
            "default_new": revisions[-1].number if revisions else 1,
            **(extra_context or {}),
        }
        return TemplateResponse(request, self.object_history_template, context)

    def history_compare_view(self, request, object_id):
        request.current_app = self.admin_site.name
        obj = self._history_object(request, object_id)
        revisions = self.history_revisions(obj.pk)
        if not revisions:
            raise Http404
        numbered = {revision.number: revision for revision in revisions}

        def chosen(name, default):
            value = request.GET.get(name)
            if value in (None, ""):
                return numbered[default]
            try:
                return numbered[int(value)]
            except (KeyError, ValueError) as unknown:
                raise Http404 from unknown

        old = chosen("old", max(len(revisions) - 1, 1))
        new = chosen("new", len(revisions))
        show_all = request.GET.get("all") == "1"
        opts = self.model._meta
        revert_name = f"admin:{opts.app_label}_{opts.model_name}_simple_history"
        context = {
            **self._history_context(
                request,
                obj,
                _("Revision %(old)s compared with revision %(new)s")
                % {"old": old.number, "new": new.number},
            ),
            "revisions": list(reversed(revisions)),
            "old": old,
            "new": new,
            "compared": [
                (revision, reverse(revert_name, args=[obj.pk, revision.history_id]))
                for revision in (old, new)
            ],
            "groups": self._compared_groups(old, new, show_all),
            "show_all": show_all,
            "default_old": old.number,
            "default_new": new.number,
            "refusal": self.history_refusal(request, obj),
        }
        return TemplateResponse(request, self.history_compare_template, context)

    def _compared_groups(self, old, new, show_all):
        """Rows per field: a translated field's languages together, shown if either changed."""
        groups = {}
        for field in self.history_fields():
            group = groups.setdefault(
                field.group, {"label": field.label, "translated": False, "rows": []}
            )
            group["translated"] = group["translated"] or field.language is not None
            before, after = field.display(old), field.display(new)
            changed = field.raw(old) != field.raw(new)
            if changed:
                before, after = words_marked(before, after)
            group["rows"].append(
                {"language": field.language_name, "old": before, "new": after, "changed": changed}
            )
        return [
            group
            for group in groups.values()
            if show_all or any(row["changed"] for row in group["rows"])
        ]

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        """One revision in the change form; POST restores it as a new revision."""
        request.current_app = self.admin_site.name
        obj = self._history_object(request, object_id)
        revisions = self.history_revisions(obj.pk)
        revision = next((r for r in revisions if str(r.history_id) == str(version_id)), None)
        if revision is None:
            raise Http404
        refusal = self.history_refusal(request, obj)
        context = self._history_context(
            request,
            obj,
            _("Revision %(number)s of %(record)s") % {"number": revision.number, "record": obj},
        )
        if request.method == "POST":
            if refusal is not None:
                self.message_user(request, refusal, messages.ERROR)
                return HttpResponseRedirect(context["history_url"])
            form = self.get_form(request, obj, change=True)(
                request.POST, request.FILES, instance=obj
            )
            if form.is_valid():
                return self._revert(request, form, revision, context)
        else:
            form = self.get_form(request, obj, change=True)(instance=revision.instance)
        fieldsets = self.get_fieldsets(request, obj)
        readonly = self.get_readonly_fields(request, obj)
        if refusal is not None:
            readonly = flatten_fieldsets(fieldsets)
        admin_form = helpers.AdminForm(
            form, fieldsets, self.get_prepopulated_fields(request, obj), readonly, self
        )
        context.update(
            {
                "revision": revision,
                "revision_count": len(revisions),
                "refusal": refusal,
                "revert_disabled": refusal is not None,
                "adminform": admin_form,
                "form": form,
                "errors": helpers.AdminErrorList(form, []),
                "media": self.media + admin_form.media,
                "inline_admin_formsets": [],
                "object_id": obj.pk,
                "add": False,
                "change": True,
                "is_popup": False,
                "save_as": False,
                "save_on_top": self.save_on_top,
                "has_add_permission": False,
                "has_change_permission": refusal is None,
                "has_view_permission": True,
                "has_delete_permission": False,
                "has_editable_inline_admin_formsets": False,
                "has_file_field": form.is_multipart(),
                "has_absolute_url": False,
                "form_url": "",
                "content_type_id": self.content_type_model_cls.objects.get_for_model(self.model).id,
                "original_opts": self.model._meta,
                **(extra_context or {}),
            }
        )
        return TemplateResponse(request, self.object_history_form_template, context)

    def _revert(self, request, form, revision, context):
        """Save the form as a new revision; a rule that refuses it is shown, nothing saved."""
        try:
            with transaction.atomic():
                restored = self.save_form(request, form, change=True)
                restored._change_reason = REVERT_REASON.format(number=revision.number)
                self.save_model(request, restored, form, change=True)
                self.save_related(request, form, [], change=True)
                self.log_change(request, restored, self.construct_change_message(request, form, []))
        except DomainError as refused:
            self.message_user(request, refused.message, messages.ERROR)
            return HttpResponseRedirect(context["history_url"])
        pk_name = self.model._meta.pk.attname
        count = self.model.history.filter(**{pk_name: restored.pk}).count()
        self.message_user(
            request,
            _("Revision %(number)s is restored as revision %(new)s.")
            % {"number": revision.number, "new": count},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(context["history_url"])
