"""A declared conflict with a system bars reviewing every version of a task it was run on."""

import json

import pytest
from django.test import Client

from catalogue.models import LocalReview, TaskDefinition, TaskVersion
from catalogue.workflows import review_transition
from governance.models import PersonDeclaration
from markets.models import CompetenceRole, Market
from mica.errors import PermissionRefused
from tests.factories import (
    LeadFactory,
    SnapshotFactory,
    StaffFactory,
    api_auth,
    attempt_payload,
    grant,
    references_registered,
)

pytestmark = pytest.mark.django_db


def next_version(definition, number):
    """A new version of the task, a copy of its current one with its contract and market
    applicability."""
    version = TaskVersion.objects.get(pk=definition.current_version_id)
    parts = [*version.clauses.all(), *version.applicability.all()]
    version.pk = None
    version.version = number
    version.save()
    for part in parts:
        part.pk, part.version = None, version
        part.save()
    return version


@pytest.fixture
def evaluated_task(canonical_content):
    """ec-reschedule-three-party with an attempt of acme-agent on its version 1.0.0."""
    lead = LeadFactory()
    system = SnapshotFactory().system
    payload = attempt_payload(verification="independent-rerun", situations=[])
    response = Client().post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json", **api_auth(lead)
    )
    assert response.status_code == 201, response.content
    return TaskDefinition.objects.get(slug="ec-reschedule-three-party"), system, lead


def review_in_kr(version, lead):
    author = StaffFactory(username="kr-author")
    reviewer = StaffFactory(username="kr-reviewer")
    grant(author, "KR", CompetenceRole.AUTHOR, lead)
    grant(reviewer, "KR", CompetenceRole.REVIEWER, lead)
    review = LocalReview.objects.create(
        version=references_registered(version), market=Market.objects.get(code="KR"), author=author
    )
    review_transition(review_id=review.pk, action="submit", actor=author)
    return review, reviewer


def test_a_conflict_bars_the_next_version_of_an_evaluated_task(evaluated_task):
    """PORTAL.md, four-eyes review: "An approval counts only from a reviewer competent for
    that market who is not the author"; the conflict register bars a reviewer who declared
    a conflict with a system evaluated on the task. The system ran on version 1.0.0; its
    version 1.1.0 is still the same task, evaluated by that system."""
    definition, system, lead = evaluated_task
    later = next_version(definition, "1.1.0")
    review, reviewer = review_in_kr(later, lead)
    declaration = PersonDeclaration.objects.create(user=reviewer)
    declaration.conflicted_systems.add(system)
    with pytest.raises(PermissionRefused, match="conflict"):
        review_transition(review_id=review.pk, action="approve", actor=reviewer)
    review.refresh_from_db()
    assert review.state == "in-review"


def test_a_conflict_with_a_system_never_run_on_the_task_bars_nothing(evaluated_task):
    """The bar follows the evaluated system: a conflict with another system leaves the
    reviewer free to approve."""
    from submissions.models import System

    definition, _system, lead = evaluated_task
    later = next_version(definition, "1.1.0")
    review, reviewer = review_in_kr(later, lead)
    other = System.objects.create(slug="other-agent", name="Other Agent", operator="Other")
    PersonDeclaration.objects.create(user=reviewer).conflicted_systems.add(other)
    assert (
        review_transition(review_id=review.pk, action="approve", actor=reviewer).state == "approved"
    )
