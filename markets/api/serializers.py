from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from markets.models import (
    DATA_STATEMENT_FIELDS,
    DATASHEET_FIELDS,
    Hazard,
    IntegrationSituation,
    LocalChange,
    MarketEdition,
    PlatformRegistration,
    RepresentativePlatform,
)
from markets.presenters import datasheet_text
from markets.services import coverage_audit
from mica.bilingual import LANGUAGES, field_columns
from mica.vocabulary import EvidenceType, RecoveryCondition, Surface, TaskFamily


class SituationSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="situation_id", read_only=True)

    class Meta:
        model = IntegrationSituation
        fields = [
            "id",
            *field_columns("title", "detail", "capability_area"),
            "task_families",
            "surfaces",
            "authorization_boundary",
            "completion_semantics",
            "recovery_conditions",
            "evidence_types",
            "status",
            "api_documented",
            "production_execution",
            "facts_source",
            "facts_source_date",
        ]


class SituationUpdateSerializer(serializers.Serializer):
    """What a competent local editor may change on a situation."""

    title_en = serializers.CharField(
        max_length=200, required=False, help_text=_("The situation's title in English.")
    )
    title_ko = serializers.CharField(
        max_length=200, required=False, help_text=_("The situation's title in Korean.")
    )
    detail_en = serializers.CharField(
        required=False, help_text=_("What the situation involves, in English.")
    )
    detail_ko = serializers.CharField(
        required=False, help_text=_("What the situation involves, in Korean.")
    )
    capability_area_en = serializers.CharField(
        max_length=200,
        required=False,
        help_text=_("The capability the situation exercises, in English."),
    )
    capability_area_ko = serializers.CharField(
        max_length=200,
        required=False,
        help_text=_("The capability the situation exercises, in Korean."),
    )
    task_families = serializers.ListField(
        child=serializers.ChoiceField(choices=TaskFamily.choices),
        required=False,
        help_text=_("The task families that meet the situation."),
    )
    surfaces = serializers.ListField(
        child=serializers.ChoiceField(choices=Surface.choices),
        required=False,
        help_text=_("The surfaces the situation spans."),
    )
    recovery_conditions = serializers.ListField(
        child=serializers.ChoiceField(choices=RecoveryCondition.choices),
        required=False,
        help_text=_("The recovery conditions the situation tests."),
    )
    evidence_types = serializers.ListField(
        child=serializers.ChoiceField(choices=EvidenceType.choices),
        required=False,
        help_text=_("The evidence types the situation requires."),
    )


class HazardSerializer(serializers.ModelSerializer):
    class Meta:
        model = Hazard
        fields = [*field_columns("title", "detail"), "diagnostic_axis"]


class LocalChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = LocalChange
        fields = [*field_columns("text"), "locality_condition"]


class PlatformSerializer(serializers.ModelSerializer):
    class Meta:
        model = RepresentativePlatform
        fields = [
            "rank",
            *field_columns("name"),
            "native_name",
            "kind",
            "snapshot_date",
            *field_columns("local_reach", "availability", "relevance"),
            "source",
            "source_accessed",
        ]


class PlatformRegistrationSerializer(serializers.ModelSerializer):
    platforms = PlatformSerializer(many=True, read_only=True)

    class Meta:
        model = PlatformRegistration
        fields = ["task_family", "status", "registered_at", "platforms"]


class CoverageSerializer(serializers.Serializer):
    complete = serializers.BooleanField()
    gaps = serializers.ListField(child=serializers.CharField())


def _texts_serializer(name, doc, fields):
    """A read-only serializer of `fields` in both languages (motivation_en, motivation_ko…),
    declared so that the API schema names every column."""
    columns = {column: serializers.CharField() for column in field_columns(*fields)}
    return type(name, (serializers.Serializer,), {"__doc__": doc, **columns})


DatasheetSerializer = _texts_serializer(
    "DatasheetSerializer",
    "A market edition's datasheet, each count filled in from the records as the page shows it.",
    DATASHEET_FIELDS,
)
DataStatementSerializer = _texts_serializer(
    "DataStatementSerializer",
    "Language variety, region, channel and reviewer context, by role only.",
    DATA_STATEMENT_FIELDS,
)


def datasheet_json(market_edition):
    """The datasheet as the market page shows it, in both languages; None without one."""
    sheet = getattr(market_edition, "datasheet", None)
    if sheet is None:
        return None
    return {
        f"{name}_{lang}": datasheet_text(market_edition, getattr(sheet, f"{name}_{lang}"))
        for name in DATASHEET_FIELDS
        for lang in LANGUAGES
    }


def data_statement_json(market_edition):
    statement = getattr(market_edition, "data_statement", None)
    if statement is None:
        return None
    return {
        column: getattr(statement, column) or "" for column in field_columns(*DATA_STATEMENT_FIELDS)
    }


class MarketEditionSummarySerializer(serializers.ModelSerializer):
    """A market with its current edition's profile: what the list shows."""

    code = serializers.CharField(source="market.code")
    native_name = serializers.CharField(source="market.native_name")
    native_lang = serializers.CharField(source="market.native_lang")
    locale = serializers.CharField(source="market.locale")
    currency_code = serializers.CharField(source="market.currency_code")
    currency_symbol = serializers.CharField(source="market.currency_symbol")
    timezone = serializers.CharField(source="market.timezone")
    name_en = serializers.CharField(source="market.name_en")
    name_ko = serializers.CharField(source="market.name_ko")
    edition = serializers.CharField(source="edition.slug")
    coverage = serializers.SerializerMethodField()
    situations = serializers.SerializerMethodField()
    datasheet = serializers.SerializerMethodField()
    data_statement = serializers.SerializerMethodField()

    class Meta:
        model = MarketEdition
        fields = [
            "code",
            "name_en",
            "name_ko",
            "native_name",
            "native_lang",
            "locale",
            "currency_code",
            "currency_symbol",
            "timezone",
            "edition",
            *field_columns("edition_note", "profile_summary"),
            "coverage",
            "situations",
            "datasheet",
            "data_statement",
        ]

    def _situations(self, obj):
        wanted = self.context.get("situation_filter") or (lambda s: True)
        return [s for s in obj.situations.all() if wanted(s)]

    def get_coverage(self, obj) -> CoverageSerializer:
        audit = coverage_audit(obj.situations.all())
        return {"complete": audit.complete, "gaps": audit.gaps}

    def get_situations(self, obj) -> SituationSerializer(many=True):
        return SituationSerializer(self._situations(obj), many=True).data

    @extend_schema_field(DatasheetSerializer(allow_null=True))
    def get_datasheet(self, obj):
        return datasheet_json(obj)

    @extend_schema_field(DataStatementSerializer(allow_null=True))
    def get_data_statement(self, obj):
        return data_statement_json(obj)


class MarketEditionDetailSerializer(MarketEditionSummarySerializer):
    hazards = HazardSerializer(many=True, read_only=True)
    local_changes = LocalChangeSerializer(many=True, read_only=True)
    platform_registrations = PlatformRegistrationSerializer(many=True, read_only=True)

    class Meta(MarketEditionSummarySerializer.Meta):
        fields = [
            *MarketEditionSummarySerializer.Meta.fields,
            "hazards",
            "local_changes",
            "platform_registrations",
        ]
