"""Revision history of the content records, kept by django-simple-history.

Why history is registered here and not declared on the model classes: the content
models keep their texts in English and Korean columns that django-modeltranslation adds
(`title_en`, `title_ko`) when the app's translation.py registers the model, which is
after the model class was prepared. A `HistoricalRecords()` attribute on the class
builds its historical model at class_prepared, before those columns exist, and the
history would then keep neither language. So each app's translation.py ends with
`track_history(...)`, after its translation registrations: the historical model is
built from the model as it finally is, with every `_en` and `_ko` column. The system
check below refuses a historical model that misses one (say, a translation registered
after the history).

The base column of a translated field (`title`, next to `title_en` and `title_ko`) is
left out of the history: modeltranslation keeps it only as a copy of whichever language
was active when the record was saved, so it would show as a change whenever editors of
the two languages took turns.
"""

import simple_history
from django.core import checks
from modeltranslation.settings import AVAILABLE_LANGUAGES
from modeltranslation.translator import NotRegistered, translator

# Large derived values that never change by hand and would be copied into every revision.
NOT_TRACKED = {
    # Frozen at publication from the live catalogue; a draft never uses its own.
    "methodology.edition": ["catalogue_snapshot"],
}

_tracked = []


def translated_fields(model):
    """The names of a model's translated fields (their base names), or []."""
    try:
        return list(translator.get_options_for_model(model).all_fields)
    except NotRegistered:
        return []


def track_history(*models):
    """Keep a revision of every save of `models`; call it after their translation options."""
    for model in models:
        simple_history.register(
            model,
            excluded_fields=translated_fields(model) + NOT_TRACKED.get(model._meta.label_lower, []),
        )
        # simple-history names the package (mica.methodology) as the module when an app's
        # label differs from its path; the class lives in the models module, beside its model.
        model.history.model.__module__ = model.__module__
        _tracked.append(model)


def tracked_models():
    return list(_tracked)


def history_column_errors():
    """A tracked model whose history misses an English or Korean column."""
    errors = []
    for model in _tracked:
        history = model.history.model
        kept = {field.name for field in history._meta.fields}
        for name in translated_fields(model):
            for language in AVAILABLE_LANGUAGES:
                if f"{name}_{language}" not in kept:
                    errors.append(
                        checks.Error(
                            f"The history of {model._meta.label} has no column {name}_{language}.",
                            hint="Call track_history() after the model's translation options.",
                            obj=history,
                            id="mica.E101",
                        )
                    )
    return errors


@checks.register(checks.Tags.models)
def _check_history_columns(app_configs, **kwargs):
    return history_column_errors()
