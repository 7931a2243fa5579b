from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from markets.models import (
    Hazard,
    IntegrationSituation,
    LocalChange,
    MarketEdition,
    PlatformRegistration,
    RepresentativePlatform,
)
from markets.services import coverage_audit
from mica.bilingual import field_columns
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
        ]

    def _situations(self, obj):
        wanted = self.context.get("situation_filter") or (lambda s: True)
        return [s for s in obj.situations.all() if wanted(s)]

    def get_coverage(self, obj) -> CoverageSerializer:
        audit = coverage_audit(obj.situations.all())
        return {"complete": audit.complete, "gaps": audit.gaps}

    def get_situations(self, obj) -> SituationSerializer(many=True):
        return SituationSerializer(self._situations(obj), many=True).data


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
