from rest_framework import serializers

from catalogue.instances import MAX_INSTANCES
from catalogue.models import ContractClause, MarketApplicability, TaskDefinition, TaskFamily
from mica.bilingual import field_columns


class FamilySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="slug")

    class Meta:
        model = TaskFamily
        fields = [
            "id",
            "position",
            "task_prefix",
            *field_columns("label", "summary", "why_hard"),
            "timeout_seconds",
        ]


class ClauseSerializer(serializers.ModelSerializer):
    class Meta:
        model = ContractClause
        fields = ["kind", *field_columns("text")]


class ApplicabilitySerializer(serializers.ModelSerializer):
    market = serializers.CharField(source="market.code")

    class Meta:
        model = MarketApplicability
        fields = [
            "market",
            "status",
            *field_columns("note", "variant", "region", "channel", "register"),
        ]


class TaskSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="slug")
    family = serializers.CharField(source="family.slug")
    version = serializers.CharField(source="current_version.version")
    title_en = serializers.CharField(source="current_version.title_en")
    title_ko = serializers.CharField(source="current_version.title_ko")
    surface = serializers.CharField(source="current_version.surface")
    termination_class = serializers.CharField(source="current_version.termination_class")
    declared_complexity = serializers.CharField(source="current_version.declared_complexity")
    markets = serializers.SerializerMethodField()

    class Meta:
        model = TaskDefinition
        fields = [
            "id",
            "family",
            "lifecycle",
            "task_set",
            "version",
            "title_en",
            "title_ko",
            "surface",
            "termination_class",
            "declared_complexity",
            "markets",
        ]

    def get_markets(self, obj) -> list[str]:
        entries = sorted(
            obj.current_version.applicability.all(), key=lambda a: a.market.display_order
        )
        return [a.market.code for a in entries if a.applies]


class TaskDetailSerializer(TaskSerializer):
    contract = serializers.SerializerMethodField()
    applicability = ApplicabilitySerializer(source="current_version.applicability", many=True)

    class Meta(TaskSerializer.Meta):
        fields = [*TaskSerializer.Meta.fields, "contract", "applicability"]

    def get_contract(self, obj) -> dict:
        version = obj.current_version
        return {
            **{
                column: getattr(version, column)
                for column in field_columns("final_state", "confirmation_boundary", "idempotency")
            },
            "clauses": ClauseSerializer(version.clauses.all(), many=True).data,
            "evidence_requirements": version.evidence_requirements,
            "diagnostic_axes": version.diagnostic_axes,
            "locality_conditions": version.locality_conditions,
            "parameters": version.parameter_schema,
            "references": {
                "status": version.reference_status,
                "method": version.reference_method,
                "sample_size": version.reference_sample_size,
                "speed_seconds": version.speed_reference_seconds,
                "cost_usd": version.cost_reference_usd,
            },
        }


class InstanceQuerySerializer(serializers.Serializer):
    market = serializers.ChoiceField(choices=[])
    seed = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    n = serializers.IntegerField(min_value=1, max_value=MAX_INSTANCES, default=5)

    def __init__(self, *args, market_codes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["market"].choices = market_codes


class InstanceSerializer(serializers.Serializer):
    instance_id = serializers.CharField()
    task_id = serializers.CharField()
    version = serializers.CharField()
    market = serializers.CharField()
    parameters = serializers.DictField()


class InstanceListSerializer(serializers.Serializer):
    task = serializers.CharField()
    version = serializers.CharField()
    market = serializers.CharField()
    seed = serializers.IntegerField()
    instances = InstanceSerializer(many=True)
