from modeltranslation.translator import TranslationOptions, register

from mica.methodology import models


@register(models.Edition)
class EditionTranslation(TranslationOptions):
    fields = ("version_label",)
    required_languages = ("en", "ko")


def _register(model, fields, required=None):
    options = type(
        f"{model.__name__}Translation",
        (TranslationOptions,),
        {
            "fields": fields,
            "required_languages": {"en": required or fields, "ko": required or fields},
        },
    )
    register(model)(options)


_register(models.ReadingKind, ("label", "definition"))
_register(models.Chapter, ("title", "lead"))
_register(models.ChapterItem, ("term", "detail", "link_label"), required=("term", "detail"))
_register(models.ReferenceGroup, ("title", "intro"), required=())
_register(
    models.Reference,
    ("title", "subtitle", "venue", "borrowed", "not_adopted", "note"),
    required=("title",),
)
_register(models.GlossaryTerm, ("term", "definition"))
_register(models.ContractSection, ("title", "eyebrow", "lead"), required=("title",))
_register(models.ContractItem, ("term", "detail"), required=("detail",))
_register(models.PolicyLine, ("term", "detail"))
