from modeltranslation.translator import TranslationOptions, register

from mica.bilingual import LANGUAGES, register_bilingual
from mica.history import track_history
from mica.methodology import models


@register(models.Edition)
class EditionTranslation(TranslationOptions):
    fields = ("version_label",)
    required_languages = LANGUAGES


register_bilingual(models.ReadingKind, ("label", "definition"))
register_bilingual(models.Chapter, ("title", "lead"))
register_bilingual(
    models.ChapterItem, ("term", "detail", "link_label"), required=("term", "detail")
)
register_bilingual(models.ReferenceGroup, ("title", "intro"), required=())
register_bilingual(
    models.Reference,
    ("title", "subtitle", "venue", "borrowed", "not_adopted", "note"),
    required=("title",),
)
register_bilingual(models.GlossaryTerm, ("term", "definition"))
register_bilingual(models.ContractSection, ("title", "eyebrow", "lead"), required=("title",))
register_bilingual(models.ContractItem, ("term", "detail"), required=("detail",))
register_bilingual(models.PolicyLine, ("term", "detail"))

# History last, so the historical models carry every _en and _ko column (mica/history.py).
track_history(models.Edition, *models.SECTION_MODELS)
