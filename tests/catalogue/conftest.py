import pytest
from django.contrib.auth.models import Permission

from catalogue.models import LocalReview, MarketApplicability, TaskDefinition, TaskVersion
from catalogue.services import task_promote, task_version_touch
from catalogue.workflows import review_transition
from markets.models import CompetenceRole, Market
from tests.factories import LeadFactory, StaffFactory, grant, references_registered


@pytest.fixture
def people(canonical_content):
    """An author and two independent reviewers for KR, and a JP-only reviewer."""
    lead = LeadFactory()
    users = {"lead": lead}
    for name in ("author", "reviewer", "second_reviewer", "jp_reviewer"):
        user = StaffFactory(username=name)
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalogue"))
        users[name] = user
    grant(users["author"], "KR", CompetenceRole.AUTHOR, lead)
    grant(users["reviewer"], "KR", CompetenceRole.REVIEWER, lead)
    grant(users["second_reviewer"], "KR", CompetenceRole.REVIEWER, lead)
    grant(users["jp_reviewer"], "JP", CompetenceRole.REVIEWER, lead)
    return users


@pytest.fixture
def task(canonical_content):
    return TaskDefinition.objects.select_related("current_version").get(
        slug="gc-resident-record-extract"
    )


@pytest.fixture
def kr_review(people, task):
    """A draft review in KR of the task's version, its references registered so that it
    can be submitted (catalogue.rules.task_review_submission_gaps)."""
    return LocalReview.objects.create(
        version=references_registered(task.current_version),
        market=Market.objects.get(code="KR"),
        author=people["author"],
    )


def approved_in_korea(version, people, reviewer="reviewer"):
    review = LocalReview.objects.create(
        version=version, market=Market.objects.get(code="KR"), author=people["author"]
    )
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    return review_transition(review_id=review.pk, action="approve", actor=people[reviewer])


@pytest.fixture
def reviewed(people, task):
    """The task's version with its references registered, Korea its only market, and an
    approved review there: ready to be validated."""
    version = references_registered(task.current_version)
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    version = task_version_touch(version=TaskVersion.objects.get(pk=version.pk))
    return version, approved_in_korea(version, people)


@pytest.fixture
def validated(reviewed, people, task):
    version, _review = reviewed
    task_promote(definition_id=task.pk, actor=people["lead"], version_id=version.pk)
    return TaskVersion.objects.get(pk=version.pk)
