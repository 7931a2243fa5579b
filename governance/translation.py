from modeltranslation.translator import TranslationOptions, register

from governance.models import Correction


@register(Correction)
class CorrectionTranslation(TranslationOptions):
    fields = ("text",)
    required_languages = ("en", "ko")
