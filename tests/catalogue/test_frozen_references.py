"""References are pre-registered, not edited after scoring (issue 32, item 5).

Seed 000: "Speed and cost references are pre-registered per task version and never
re-derived from the cohort being scored." Once a version is validated its references
are read-only (admin, services, the model itself); before, they are part of what a local
reviewer approves (an edit voids the approval); a change is a new version.
"""

import importlib
from decimal import Decimal

import pytest
from django.utils import translation

from catalogue.models import (
    REFERENCE_FIELDS,
    LocalReview,
    ReviewState,
    TaskVersion,
)
from catalogue.rules import task_version_content, task_version_hash
from catalogue.services import (
    task_version_make_current,
    task_version_start_next,
    task_version_touch,
)
from markets.models import Market
from mica.errors import InvalidTransition
from tests.catalogue.conftest import approved_in_korea
from tests.census import form_data

pytestmark = pytest.mark.django_db

VERSIONS = "/admin/catalogue/taskversion/"


def test_the_references_are_part_of_what_a_reviewer_approves(reviewed, people):
    """An edit of the references before validation voids the approval, as any edit of
    the approved content does."""
    version, review = reviewed
    assert task_version_content(version)["references"] == {
        "status": "registered",
        "method": "pilot-median",
        "sample_size": 12,
        "speed_seconds": "240.00",
        "cost_usd": "0.0500",
    }
    # The same references however they are written keep the hash (and the approval).
    version.speed_reference_seconds, version.cost_reference_usd = 240, "0.05"
    assert task_version_hash(version) == review.approved_hash
    version.speed_reference_seconds = Decimal("180")
    version.save()
    touched = task_version_touch(version=version, actor=people["author"])
    assert [r.pk for r in touched.reviews_voided] == [review.pk]
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.VOIDED


def test_a_validated_versions_references_never_change(validated):
    """Once validated, the model refuses a change of any reference, through save() and
    through an update of the rows; the same values, and every other field, still save."""
    for field, value in [
        ("speed_reference_seconds", Decimal("120")),
        ("cost_reference_usd", Decimal("0.0100")),
        ("reference_sample_size", 30),
        ("reference_method", "expert-estimate"),
    ]:
        version = TaskVersion.objects.get(pk=validated.pk)
        setattr(version, field, value)
        with pytest.raises(InvalidTransition, match="pre-registered"):
            version.save()
        with pytest.raises(InvalidTransition):
            TaskVersion.objects.filter(pk=validated.pk).update(**{field: value})
    stored = TaskVersion.objects.get(pk=validated.pk)
    assert stored.references() == validated.references()
    stored.speed_reference_seconds = 240  # the value it has, written another way
    stored.save()
    TaskVersion.objects.filter(pk=validated.pk).update(cost_reference_usd="0.0500")
    # Nor does any other field: validated, the whole text is the number's (issue 41).
    stored.title_en = "A clearer title"
    with pytest.raises(InvalidTransition, match="is frozen"):
        stored.save()
    with translation.override("ko"), pytest.raises(InvalidTransition) as in_korean:
        TaskVersion.objects.filter(pk=validated.pk).update(reference_sample_size=1)
    assert "사전 등록" in in_korean.value.message and "새 버전" in in_korean.value.message


def test_a_version_made_current_is_validated_too(validated, people, task):
    """Making a newer version current validates it: its references are fixed from then;
    it carries references of its own (a change of reference is a new version)."""
    newer = task_version_start_next(version_id=validated.pk, actor=people["author"])
    assert newer.version == "1.1.0" and not newer.frozen
    newer.speed_reference_seconds = Decimal("200.00")
    newer.save()
    newer = task_version_touch(version=newer)
    approved_in_korea(newer, people, reviewer="second_reviewer")
    newer.cost_reference_usd = Decimal("0.0400")  # not validated yet: still the author's
    newer.save()
    newer = task_version_touch(version=newer)
    approved_in_korea(newer, people)
    task_version_make_current(version_id=newer.pk, actor=people["lead"])
    with pytest.raises(InvalidTransition):
        TaskVersion.objects.filter(pk=newer.pk).update(speed_reference_seconds=100)
    assert TaskVersion.objects.get(pk=newer.pk).references()["cost_usd"] == "0.0400"
    assert TaskVersion.objects.get(pk=validated.pk).references()["speed_seconds"] == "240.00"


def test_the_admin_shows_the_references_locked_and_why(client, people, validated):
    """Issue 32, item 5: "The admin shows why a field is locked", in both languages; a
    post cannot change them."""
    url = f"{VERSIONS}{validated.pk}/change/"
    client.force_login(people["lead"])
    page = client.get(url)
    form = page.context["adminform"].form
    assert not set(REFERENCE_FIELDS) & set(form.fields)
    assert "Fixed: this version was validated on" in page.text
    assert "Different references need a new version." in page.text
    korean = client.get(f"/ko{url}").text
    assert "고정됨: 이 버전은" in korean and "새 버전을 만드세요" in korean
    # The change form itself (the page's other form starts a new version from this one).
    data = form_data(page.text, "taskversion_form")
    data.update(speed_reference_seconds="1", cost_reference_usd="0.0001")
    response = client.post(url, data)
    assert response.status_code == 403
    assert TaskVersion.objects.get(pk=validated.pk).references() == validated.references()


def test_before_validation_the_admin_says_what_an_edit_of_them_does(client, people, reviewed):
    version, review = reviewed
    url = f"{VERSIONS}{version.pk}/change/"
    client.force_login(people["lead"])
    page = client.get(url)
    assert "speed_reference_seconds" in page.context["adminform"].form.fields
    assert "an edit of them voids an approval" in page.text
    data = form_data(page.text)
    data["speed_reference_seconds"] = "300.00"
    assert client.post(url, data).status_code == 302
    assert LocalReview.objects.get(pk=review.pk).state == ReviewState.VOIDED


def test_the_migration_hashes_as_the_rules_do_and_keeps_approvals_in_force(reviewed, people):
    """The content hash the migration takes again for every version is the one the rules
    take today; an approval that was in force under the old hash stays in force, and one
    that was not stays out of force."""
    from django.apps import apps

    migration = importlib.import_module("catalogue.migrations.0007_references_in_the_content_hash")
    version, review = reviewed
    assert migration._hash(version) == task_version_hash(version)
    stale = LocalReview.objects.create(
        version=version, market=Market.objects.get(code="JP"), author=people["author"]
    )
    old, older = "a" * 64, "b" * 64
    TaskVersion.objects.filter(pk=version.pk).update(content_hash=old)
    LocalReview.objects.filter(pk=review.pk).update(approved_hash=old)
    LocalReview.objects.filter(pk=stale.pk).update(state="approved", approved_hash=older)
    migration.rehash(apps, None)
    new = task_version_hash(version)
    assert TaskVersion.objects.get(pk=version.pk).content_hash == new
    assert LocalReview.objects.get(pk=review.pk).approved_hash == new
    assert LocalReview.objects.get(pk=stale.pk).approved_hash == older
