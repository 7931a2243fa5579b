from modeltranslation.translator import TranslationOptions, register

from governance.models import (
    Correction,
    DecisionRight,
    DisclosureStatement,
    IndependenceItem,
    Refusal,
    RoleDisclosure,
    Withdrawal,
)
from mica.bilingual import register_bilingual


@register(Correction)
class CorrectionTranslation(TranslationOptions):
    fields = ("text",)
    required_languages = ("en", "ko")


register_bilingual(DisclosureStatement, ("title", "statement"))
register_bilingual(DecisionRight, ("right", "holder", "note"), required=("right", "holder"))
register_bilingual(Refusal, ("text",))
register_bilingual(IndependenceItem, ("title", "detail"))
register_bilingual(RoleDisclosure, ("relationships", "conflicts_declared"))
register_bilingual(Withdrawal, ("figure", "where", "reason"))
