"""Promotion from candidate to validated names every gap and refuses until none remain."""

import pytest

from catalogue.models import Lifecycle, LocalReview, MarketApplicability, ReviewState
from catalogue.rules import task_promotion_gaps
from catalogue.services import task_promote, task_version_touch
from catalogue.workflows import review_transition
from markets.models import Market
from mica.errors import PermissionRefused, ValidationFailed

pytestmark = pytest.mark.django_db


def test_a_loaded_candidate_lacks_references_and_reviews(task):
    gaps = task_promotion_gaps(task)
    assert gaps[0] == "speed and cost references are still calibration-pending"
    assert "no approved local review in KR" in gaps


def test_every_gap_is_named(task):
    version = task.current_version
    version.surface = version.termination_class = version.declared_complexity = ""
    version.diagnostic_axes = []
    version.save()
    version.applicability.filter(market__code__in=["JP", "TH"]).delete()
    version.clauses.filter(kind="invariant").delete()
    gaps = task_promotion_gaps(task)
    for gap in [
        "missing surface",
        "missing termination class",
        "missing declared complexity",
        "missing diagnostic axes",
        "market applicability omits JP",
        "market applicability omits TH",
        "speed and cost references are still calibration-pending",
        "no approved local review in KR",
        "the contract has no invariants",
    ]:
        assert gap in gaps
    version.applicability.all().delete()
    assert "missing market applicability" in task_promotion_gaps(task)


def test_promotion_refuses_then_succeeds_when_every_gap_is_closed(people, task):
    with pytest.raises(ValidationFailed) as refused:
        task_promote(definition_id=task.pk, actor=people["lead"])
    assert "calibration-pending" in str(refused.value.message)
    with pytest.raises(PermissionRefused):
        task_promote(definition_id=task.pk, actor=people["author"])

    version = task.current_version
    version.reference_status, version.reference_sample_size = "registered", 12
    version.speed_reference_seconds, version.cost_reference_usd = 240, "0.4200"
    version.save()
    # Only one market applies, so one approved review is the whole of the review rule.
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    task_version_touch(version=version)
    kr = Market.objects.get(code="KR")
    review = LocalReview.objects.create(version=version, market=kr, author=people["author"])
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    review_transition(review_id=review.pk, action="approve", actor=people["reviewer"])
    assert task_promotion_gaps(task) == []
    promoted = task_promote(definition_id=task.pk, actor=people["lead"])
    assert promoted.lifecycle == Lifecycle.VALIDATED
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.APPROVED
