from modeltranslation.translator import TranslationOptions, register

from markets import models
from mica.bilingual import LANGUAGES
from mica.history import track_history


@register(models.Market)
class MarketTranslation(TranslationOptions):
    fields = ("name",)
    required_languages = LANGUAGES


@register(models.MarketEdition)
class MarketEditionTranslation(TranslationOptions):
    fields = ("edition_note", "profile_summary")
    required_languages = LANGUAGES


@register(models.Hazard)
class HazardTranslation(TranslationOptions):
    fields = ("title", "detail")
    required_languages = LANGUAGES


@register(models.LocalChange)
class LocalChangeTranslation(TranslationOptions):
    fields = ("text",)
    required_languages = LANGUAGES


@register(models.IntegrationSituation)
class IntegrationSituationTranslation(TranslationOptions):
    fields = ("title", "detail", "capability_area")
    required_languages = LANGUAGES


@register(models.PlatformRegistration)
class PlatformRegistrationTranslation(TranslationOptions):
    fields = ("supersede_reason",)


@register(models.RepresentativePlatform)
class RepresentativePlatformTranslation(TranslationOptions):
    fields = ("name", "local_reach", "availability", "relevance")
    required_languages = LANGUAGES


@register(models.Datasheet)
class DatasheetTranslation(TranslationOptions):
    fields = models.DATASHEET_FIELDS
    required_languages = LANGUAGES


@register(models.DataStatement)
class DataStatementTranslation(TranslationOptions):
    fields = models.DATA_STATEMENT_FIELDS
    required_languages = LANGUAGES


# History last, so the historical models carry every _en and _ko column (mica/history.py).
track_history(
    models.Market,
    models.MarketEdition,
    models.Hazard,
    models.LocalChange,
    models.IntegrationSituation,
    models.PlatformRegistration,
    models.RepresentativePlatform,
    models.Datasheet,
    models.DataStatement,
)
