"""Editing a bilingual record in the admin: English and Korean side by side.

`BilingualAdmin` goes before modeltranslation's admin among the bases (after
`HistoryAdmin` where both are used), for a model admin or an inline:

    class ChapterItemAdmin(HistoryAdmin, BilingualAdmin, TranslationAdmin): ...

Every translated field's English and Korean columns share one line of the form, the
English first. Where the English source changed after the Korean text was approved,
the English field says so and shows the change word by word (removed words in <del>,
added ones in <ins>), so the translator sees what the Korean has to follow.

When was the Korean approved? `korean_approved_at(obj)` answers for the whole record:
by default its own `korean_approved_at` column where the model has one (a claim's
Korean approval), else None, and then each field falls back to the revision that last
changed its Korean text: whoever wrote that Korean wrote it against the English of
that moment. An admin with an approval of its own (a task's local review in Korea)
overrides the hook.
"""

from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.utils.translation import gettext as _

from mica.history import translated_fields
from mica.history_admin import words_marked

SOURCE, TARGET = "en", "ko"


def _paired(fields, translated):
    """`fields` with each translated field's Korean column on its English column's line."""
    names = {name for line in fields for name in (line if isinstance(line, tuple) else [line])}
    lines = []
    for line in fields:
        if isinstance(line, str) and line.endswith(f"_{TARGET}"):
            base = line[: -len(TARGET) - 1]
            if base in translated and f"{base}_{SOURCE}" in names:
                continue  # shown beside its English
        if isinstance(line, str) and line.endswith(f"_{SOURCE}"):
            base = line[: -len(SOURCE) - 1]
            if base in translated and f"{base}_{TARGET}" in names:
                line = (line, f"{base}_{TARGET}")
        lines.append(line)
    return lines


def _revisions(obj):
    history = getattr(obj, "history", None)
    if history is None or obj.pk is None:
        return []
    return list(history.order_by("history_date", "history_id"))


def _english_when_korean_approved(revisions, field, approved_at):
    """The English text the Korean of `field` was approved against, or None if unknown."""
    source, target = f"{field}_{SOURCE}", f"{field}_{TARGET}"
    if approved_at is not None:
        before = [r for r in revisions if r.history_date <= approved_at]
        return (getattr(before[-1], source) or "", approved_at) if before else None
    korean_written = None
    for older, newer in zip([None, *revisions], revisions, strict=False):
        if older is None or getattr(older, target) != getattr(newer, target):
            korean_written = newer
    if korean_written is None or not getattr(korean_written, target):
        return None
    return getattr(korean_written, source) or "", korean_written.history_date


def english_changes_since_korean_approval(obj, approved_at=None):
    """{field: help text} for each translated field whose English changed after its Korean
    was approved: the change marked word by word, with when the Korean was approved."""
    revisions = _revisions(obj)
    if not revisions:
        return {}
    changes = {}
    for field in translated_fields(type(obj)):
        known = _english_when_korean_approved(revisions, field, approved_at)
        if known is None:
            continue
        approved_english, at = known
        current = getattr(obj, f"{field}_{SOURCE}") or ""
        if approved_english == current:
            continue
        before, after = words_marked(approved_english, current)
        changes[field] = format_html(
            '<span class="english-changed">{}</span><br><span lang="en">{}</span>'
            '<br><span lang="en">{}</span>',
            _("The English changed after the Korean was approved (%(date)s); update the Korean:")
            % {"date": date_format(localtime(at), "DATETIME_FORMAT")},
            before,
            after,
        )
    return changes


def _languages_marked(form, translated, fields=None):
    """Each translated field's widget says the language of its text (lang="en", "ko"), so
    the browser, a screen reader and a spell checker read the English beside the Korean
    as English on a Korean page."""
    for name, field in (form.fields if fields is None else fields).items():
        base, _sep, language = name.rpartition("_")
        if base in translated and language in (SOURCE, TARGET):
            field.widget.attrs.setdefault("lang", language)


def _with_english_changes(form_class, approved_at_of):
    """`form_class` whose English fields show their change since the Korean approval."""
    translated = set(translated_fields(form_class._meta.model))

    class BilingualForm(form_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _languages_marked(self, translated)
            if self.instance.pk is None:
                return
            changes = english_changes_since_korean_approval(
                self.instance, approved_at_of(self.instance)
            )
            for field, change in changes.items():
                name = f"{field}_{SOURCE}"
                if name in self.fields:
                    self.fields[name].help_text = change

    BilingualForm.__name__ = form_class.__name__
    return BilingualForm


class BilingualAdmin:
    """English and Korean side by side, the English change since the Korean approval shown."""

    class Media:
        css = {"all": ["mica/admin-bilingual.css"]}

    def korean_approved_at(self, obj):
        """When the Korean of `obj` was approved as a whole, or None (see the module)."""
        fields = {field.name for field in obj._meta.get_fields()}
        return getattr(obj, "korean_approved_at", None) if "korean_approved_at" in fields else None

    def get_fieldsets(self, request, obj=None):
        translated = translated_fields(self.model)
        fieldsets = super().get_fieldsets(request, obj)
        if not translated:
            return fieldsets
        paired = []
        for name, options in fieldsets:
            classes = [*options.get("classes", ()), "bilingual"]
            fields = _paired(list(options["fields"]), translated)
            paired.append((name, {**options, "fields": fields, "classes": classes}))
        return paired

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        return _with_english_changes(form, self.korean_approved_at)

    def get_inline_formsets(self, request, formsets, inline_instances, obj=None):
        """Every inline's translated fields say their language too, bilingual inline or not
        (a market edition's datasheet, hazards and local changes)."""
        for formset in formsets:
            translated = set(translated_fields(formset.model))
            for form in formset.forms:
                _languages_marked(form, translated)
            # The blank form "Add another" copies is built from the class's fields.
            _languages_marked(formset.form, translated, formset.form.base_fields)
        return super().get_inline_formsets(request, formsets, inline_instances, obj)


class BilingualInline(BilingualAdmin):
    """The same for an inline: each inline record's own history and approval."""

    def korean_approval_key(self, obj):
        """Records with the same key share their Korean approval (by default none do)."""
        return obj.pk

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.form = _with_english_changes(formset.form, _once_per_form_page(self))
        return formset


def _once_per_form_page(inline):
    """The inline's `korean_approved_at`, asked once for the records that share an answer
    (`korean_approval_key`): one question per change form, not one per inline row."""
    answers = {}

    def approved_at(obj):
        key = inline.korean_approval_key(obj)
        if key not in answers:
            answers[key] = inline.korean_approved_at(obj)
        return answers[key]

    return approved_at
