import pytest
from django.contrib.auth.models import Permission

from catalogue.models import LocalReview, TaskDefinition
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
