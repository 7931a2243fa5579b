import pytest
from django.contrib.auth.models import Permission

from markets.models import CompetenceRole
from tests.factories import LeadFactory, StaffFactory, grant


@pytest.fixture
def lead(db):
    return LeadFactory()


@pytest.fixture
def kr_editor(canonical_content, lead):
    """A staff user whose only current competence is for KR."""
    user = StaffFactory(username="kr-editor")
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="markets"))
    grant(user, "KR", CompetenceRole.AUTHOR, lead)
    return user
