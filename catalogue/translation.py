from modeltranslation.translator import TranslationOptions, register

from catalogue import models
from mica.bilingual import LANGUAGES
from mica.history import track_history


@register(models.TaskFamily)
class TaskFamilyTranslation(TranslationOptions):
    fields = ("label", "summary", "why_hard", "final_state_evidence", "boundary_evidence")
    required_languages = {
        "en": ("label", "summary", "why_hard"),
        "ko": ("label", "summary", "why_hard"),
    }


@register(models.TaskVersion)
class TaskVersionTranslation(TranslationOptions):
    fields = ("title", "final_state", "confirmation_boundary", "idempotency")
    required_languages = {
        "en": ("title", "final_state", "confirmation_boundary"),
        "ko": ("title", "final_state", "confirmation_boundary"),
    }


@register(models.ContractClause)
class ContractClauseTranslation(TranslationOptions):
    fields = ("text",)
    required_languages = LANGUAGES


@register(models.MarketApplicability)
class MarketApplicabilityTranslation(TranslationOptions):
    fields = ("note", "variant", "region", "channel", "register")
    required_languages = {"en": ("note",), "ko": ("note",)}


# History last, so the historical models carry every _en and _ko column (mica/history.py).
track_history(
    models.TaskFamily,
    models.TaskDefinition,
    models.TaskVersion,
    models.ContractClause,
    models.MarketApplicability,
    models.ReviewComment,
)
