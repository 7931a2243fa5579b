from django.db.models import F
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from governance.models import Correction, DecisionRight, DisclosureStatement, GateCell, Withdrawal
from governance.selectors import cell_list, correction_log, is_stale, withdrawal_log
from governance.sensitivity import sensitivity_document
from mica.bilingual import LANGUAGES
from mica.vocabulary import BLOCKER_SENTENCES


class CellSerializer(serializers.ModelSerializer):
    cell = serializers.CharField(source="cell_id")
    system = serializers.CharField(source="snapshot.system.slug")
    snapshot_version = serializers.CharField(source="snapshot.version")
    market = serializers.CharField(source="market.code")
    family = serializers.CharField(source="family.slug")
    # As of now: a cell computed under other inputs than the current ones is "stale".
    blockers = serializers.ListField(source="reasons", child=serializers.CharField())
    publication_eligible = serializers.BooleanField(source="eligible")
    blocker_sentences = serializers.SerializerMethodField()
    # "official" only for an independent rerun in a cell that passed the gate
    # (governance.models.standing_of); `data_status` alone never says so.
    standing = serializers.CharField(source="standing.value")
    standing_sentence = serializers.SerializerMethodField()

    class Meta:
        model = GateCell
        fields = [
            "cell",
            "system",
            "snapshot_version",
            "market",
            "family",
            # What the discard rate is counted from, so anyone can redo it.
            "attempts",
            "eligible_runs",
            "ineligible_runs",
            "invalid_runs",
            "successes",
            "accuracy",
            "accuracy_low",
            "accuracy_high",
            "reliability",
            "p50_seconds",
            "p95_seconds",
            "cost_per_success_usd",
            "tasks_attempted",
            "tasks_defined",
            "coverage",
            "discard_rate",
            "critical_safety_events",
            "memory",
            "platforms",
            "platform_parity",
            "verification",
            "data_status",
            "standing",
            "standing_sentence",
            "blockers",
            "blocker_sentences",
            "publication_eligible",
            "task_scores",
            "components",
        ]

    def get_standing_sentence(self, obj) -> dict:
        sentence = {}
        for language in LANGUAGES:
            with translation.override(language):
                sentence[language] = str(obj.standing.label)
        return sentence

    def get_blocker_sentences(self, obj) -> list[dict]:
        sentences = []
        for code in obj.reasons:
            entry = {"code": code}
            for language in LANGUAGES:
                with translation.override(language):
                    entry[language] = str(BLOCKER_SENTENCES.get(code, code))
            sentences.append(entry)
        return sentences


@extend_schema(summary=_("Every gate cell with its figures and, while withheld, its blockers"))
class CellList(generics.ListAPIView):
    """Every gate cell with its figures and, while withheld, its blockers."""

    serializer_class = CellSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            # The schema (and /api/docs/) reads the model, never the cells: the gate
            # inputs' fingerprint that cell_list() takes would make the reference page
            # read every task version, and be baked again after every task edit.
            return GateCell.objects.none()
        return cell_list()


@extend_schema(
    summary=_("The sensitivity analysis over the scoring policy, one table per published ranking"),
    responses=OpenApiTypes.OBJECT,
)
class Sensitivity(APIView):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy". Every published ranking (cells, market and cross-market family
    figures) under each normalization crossed with each aggregation, as mica-gate.json
    publishes it, with its words in English and Korean."""

    def get(self, request):
        return Response(sensitivity_document(cell_list()))


class _BilingualList(generics.ListAPIView):
    pagination_class = None


class DisclosureSerializer(serializers.ModelSerializer):
    stale = serializers.SerializerMethodField()
    # A statement's predecessor and successor in the register, by id.
    supersedes = serializers.IntegerField(source="supersedes_id", allow_null=True)
    superseded_by = serializers.SerializerMethodField()

    class Meta:
        model = DisclosureStatement
        fields = [
            "id",
            "key",
            "category",
            "title_en",
            "title_ko",
            "statement_en",
            "statement_ko",
            "basis",
            "confirmed_on",
            "confirm_every_days",
            "stale",
            "amount_min",
            "amount_max",
            "amount_currency",
            "amount_period",
            "created_at",
            "superseded_at",
            "supersedes",
            "superseded_by",
        ]

    def get_stale(self, obj) -> bool:
        return is_stale(obj)

    def get_superseded_by(self, obj) -> int | None:
        successor = getattr(obj, "superseded_by", None)
        return successor.pk if successor is not None else None


@extend_schema(
    summary=_("The disclosure register: current statements first, then the superseded history")
)
class DisclosureList(_BilingualList):
    """The disclosure register: current statements first, then the superseded history."""

    serializer_class = DisclosureSerializer

    def get_queryset(self):
        # Current statements (no superseded date) first, in every database's NULL order.
        return DisclosureStatement.objects.select_related("superseded_by").order_by(
            F("superseded_at").asc(nulls_first=True), "category", "key"
        )


class DecisionRightSerializer(serializers.ModelSerializer):
    class Meta:
        model = DecisionRight
        fields = [
            "key",
            "right_en",
            "right_ko",
            "holder_en",
            "holder_ko",
            "independently_held",
            "note_en",
            "note_ko",
        ]


@extend_schema(
    summary=_("Who holds each decision right today, and whether it is independently held")
)
class DecisionRightList(_BilingualList):
    serializer_class = DecisionRightSerializer

    def get_queryset(self):
        return DecisionRight.objects.all()


class CorrectionSerializer(serializers.ModelSerializer):
    edition = serializers.CharField(source="edition.slug")
    challenge = serializers.IntegerField(source="challenge_id", allow_null=True)

    class Meta:
        model = Correction
        fields = ["id", "edition", "section_id", "text_en", "text_ko", "decided_on", "challenge"]


@extend_schema(
    summary=_("Corrections to the method, each with the edition and section it corrects")
)
class CorrectionList(_BilingualList):
    serializer_class = CorrectionSerializer

    def get_queryset(self):
        return correction_log()


class WithdrawalSerializer(serializers.ModelSerializer):
    edition = serializers.CharField(source="edition.slug")

    class Meta:
        model = Withdrawal
        fields = [
            "edition",
            "figure_en",
            "figure_ko",
            "where_en",
            "where_ko",
            "original_value",
            "corrected_value",
            "reason_en",
            "reason_ko",
            "decided_on",
        ]


@extend_schema(
    summary=_("Withdrawn figures stay listed, with the original and the corrected value")
)
class WithdrawalList(_BilingualList):
    """Withdrawn figures stay listed, with the original and the corrected value."""

    serializer_class = WithdrawalSerializer

    def get_queryset(self):
        return withdrawal_log()
