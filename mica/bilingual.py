"""The two languages of the portal, and registering a model's human-readable fields for
their columns."""

from django.conf import settings
from modeltranslation.translator import TranslationOptions, register

# Every "in English and Korean" of the code: pages, packs, exports, checks.
LANGUAGES = tuple(settings.MODELTRANSLATION_LANGUAGES)


def register_bilingual(model, fields, required=None):
    """Register `fields` for translation; `required` (default: all) must have both languages."""
    required = fields if required is None else required
    options = type(
        f"{model.__name__}Translation",
        (TranslationOptions,),
        {
            "fields": fields,
            "required_languages": dict.fromkeys(LANGUAGES, required),
        },
    )
    register(model)(options)


def field_columns(*fields):
    """The per-language columns of translated fields: name_en, name_ko, …"""
    return [f"{name}_{lang}" for name in fields for lang in LANGUAGES]


def field_pair(record, field, style=str):
    """A record's translated field in both languages: {"en": …, "ko": …} ("" when empty)."""
    return {lang: style(getattr(record, f"{field}_{lang}") or "") for lang in LANGUAGES}
