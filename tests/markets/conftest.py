import datetime

import pytest
from django.contrib.auth.models import Permission, User

from markets.models import CompetenceRole, Market, MarketCompetence


@pytest.fixture
def lead(db):
    return User.objects.create_superuser("lead", "lead@example.org", "pw-for-tests-only")


@pytest.fixture
def kr_editor(canonical_content, lead):
    """A staff user whose only current competence is for KR."""
    user = User.objects.create_user("kr-editor", password="pw-for-tests-only", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="markets"))
    MarketCompetence.objects.create(
        user=user,
        market=Market.objects.get(code="KR"),
        role=CompetenceRole.AUTHOR,
        verified_by=lead,
        valid_until=datetime.date.today() + datetime.timedelta(days=90),
    )
    return user
