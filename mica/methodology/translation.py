from modeltranslation.translator import TranslationOptions, register

from mica.methodology.models import Edition


@register(Edition)
class EditionTranslation(TranslationOptions):
    fields = ("version_label",)
    required_languages = ("en", "ko")
