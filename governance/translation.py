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
from mica.bilingual import LANGUAGES, register_bilingual
from mica.history import track_history


@register(Correction)
class CorrectionTranslation(TranslationOptions):
    fields = ("text",)
    required_languages = LANGUAGES


register_bilingual(DisclosureStatement, ("title", "statement"))
register_bilingual(DecisionRight, ("right", "holder", "note"), required=("right", "holder"))
register_bilingual(Refusal, ("text",))
register_bilingual(IndependenceItem, ("title", "detail"))
register_bilingual(RoleDisclosure, ("relationships", "conflicts_declared"))
register_bilingual(Withdrawal, ("figure", "where", "reason"))

# History last, so the historical models carry every _en and _ko column (mica/history.py).
track_history(
    Correction,
    DisclosureStatement,
    DecisionRight,
    Refusal,
    IndependenceItem,
    RoleDisclosure,
    Withdrawal,
)
