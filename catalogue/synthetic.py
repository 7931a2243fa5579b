"""A generated catalogue of any size, for benchmarks and load tests of the exports.

Every generated task says it is synthetic in its id and title, lives in the
existing families, and applies to every market. Rows are inserted in bulk (no
signals), so generating ten thousand tasks takes seconds, not minutes.
"""

from catalogue.models import (
    Lifecycle,
    MarketApplicability,
    TaskDefinition,
    TaskFamily,
    TaskSet,
    TaskVersion,
)
from markets.models import Market

BATCH = 1000


def _version(definition, number):
    return TaskVersion(
        definition=definition,
        version="1.0.0",
        title_en=f"Synthetic errand {number}",
        title_ko=f"합성 심부름 {number}",
        final_state_en=f"The synthetic record {number} shows the requested change.",
        final_state_ko=f"합성 기록 {number}에 요청한 변경이 반영되어 있습니다.",
        confirmation_boundary_en="Stop before anything is paid or sent.",
        confirmation_boundary_ko="결제나 발송 전에 멈춥니다.",
        evidence_requirements=["read-back of the synthetic record"],
        content_hash=f"synthetic-{number}",
    )


def synthetic_catalogue_create(count, *, task_set=TaskSet.PUBLIC, prefix="synthetic"):
    """Create `count` tasks with one current version each; return their ids."""
    families = list(TaskFamily.objects.order_by("position"))
    markets = list(Market.objects.order_by("display_order"))
    slugs = []
    for start in range(0, count, BATCH):
        numbers = range(start + 1, min(start + BATCH, count) + 1)
        definitions = TaskDefinition.objects.bulk_create(
            TaskDefinition(
                slug=f"{prefix}-task-{n}",
                family=families[n % len(families)],
                position=1000 + n,
                lifecycle=Lifecycle.CANDIDATE,
                task_set=task_set,
                source="synthetic",
            )
            for n in numbers
        )
        versions = TaskVersion.objects.bulk_create(
            _version(d, n) for d, n in zip(definitions, numbers, strict=True)
        )
        MarketApplicability.objects.bulk_create(
            MarketApplicability(version=v, market=m, status="applicable", note="synthetic")
            for v in versions
            for m in markets
        )
        for definition, version in zip(definitions, versions, strict=True):
            definition.current_version = version
        TaskDefinition.objects.bulk_update(definitions, ["current_version"])
        slugs.extend(d.slug for d in definitions)
    return slugs
