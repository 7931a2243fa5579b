"""Registering a model's human-readable fields for English and Korean columns."""

from modeltranslation.translator import TranslationOptions, register


def register_bilingual(model, fields, required=None):
    """Register `fields` for translation; `required` (default: all) must have both languages."""
    required = fields if required is None else required
    options = type(
        f"{model.__name__}Translation",
        (TranslationOptions,),
        {
            "fields": fields,
            "required_languages": {"en": required, "ko": required},
        },
    )
    register(model)(options)
