"""The loaded catalogue: ten families of ten candidates, every text in both languages."""

import pytest

from catalogue.models import Lifecycle, TaskDefinition, TaskFamily, TaskSet
from tests.support import fields_missing_korean

pytestmark = pytest.mark.django_db


def test_ten_families_of_ten_public_candidates(canonical_content):
    assert TaskFamily.objects.count() == 10
    assert [f.slug for f in TaskFamily.objects.order_by("position")][:2] == [
        "email-calendar",
        "shopping-delivery",
    ]
    for family in TaskFamily.objects.all():
        assert family.tasks.count() == 10, family.slug
        assert all(t.slug.startswith(family.task_prefix) for t in family.tasks.all())
    assert TaskDefinition.objects.filter(lifecycle=Lifecycle.CANDIDATE).count() == 100
    assert TaskDefinition.objects.filter(lifecycle=Lifecycle.VALIDATED).count() == 0
    assert TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).count() == 100


def test_every_task_has_a_complete_contract_for_all_six_markets(canonical_content):
    assert TaskDefinition.objects.count() == 100
    for task in TaskDefinition.objects.select_related("current_version"):
        version = task.current_version
        kinds = {c.kind for c in version.clauses.all()}
        assert kinds == {"obligation", "invariant", "prohibited"}, task.slug
        codes = [a.market.code for a in version.applicability.order_by("market__display_order")]
        assert codes == ["KR", "JP", "SG", "TW", "AE", "TH"], task.slug
        assert version.surface and version.termination_class and version.declared_complexity
        assert version.reference_status == "calibration-pending"


def test_every_translated_field_has_korean(canonical_content):
    missing = fields_missing_korean("catalogue")
    assert not missing, missing[:10]
