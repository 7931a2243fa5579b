from rest_framework import generics, serializers

from governance.models import GateCell
from governance.presenters import BLOCKER_SENTENCES
from governance.selectors import cell_list


class CellSerializer(serializers.ModelSerializer):
    cell = serializers.CharField(source="cell_id")
    system = serializers.CharField(source="snapshot.system.slug")
    snapshot_version = serializers.CharField(source="snapshot.version")
    market = serializers.CharField(source="market.code")
    family = serializers.CharField(source="family.slug")
    blocker_sentences = serializers.SerializerMethodField()

    class Meta:
        model = GateCell
        fields = [
            "cell",
            "system",
            "snapshot_version",
            "market",
            "family",
            "eligible_runs",
            "successes",
            "accuracy",
            "accuracy_low",
            "accuracy_high",
            "p50_seconds",
            "p95_seconds",
            "cost_per_success_usd",
            "tasks_attempted",
            "tasks_defined",
            "coverage",
            "critical_safety_events",
            "verification",
            "data_status",
            "blockers",
            "blocker_sentences",
            "publication_eligible",
            "task_scores",
        ]

    def get_blocker_sentences(self, obj) -> list[dict]:
        from django.utils import translation

        sentences = []
        for code in obj.blockers:
            entry = {"code": code}
            for language in ("en", "ko"):
                with translation.override(language):
                    entry[language] = str(BLOCKER_SENTENCES.get(code, code))
            sentences.append(entry)
        return sentences


class CellList(generics.ListAPIView):
    """Every gate cell with its figures and, while withheld, its blockers."""

    serializer_class = CellSerializer

    def get_queryset(self):
        return cell_list()
