"""Appeals: only against a decision, decided by someone other than the decider, in public."""

import pytest
from django.contrib.auth.models import User

from governance.models import AppealState
from governance.services import appeal_decide, appeal_file
from mica.errors import PermissionRefused, ValidationFailed
from submissions.challenges import challenge_transition
from tests.submissions.test_challenges import confirmed_challenge

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(canonical_content):
    first = User.objects.create_superuser("lead-a", "a@example.org", "pw-for-tests-only")
    second = User.objects.create_superuser("lead-b", "b@example.org", "pw-for-tests-only")
    challenge = confirmed_challenge()
    with pytest.raises(ValidationFailed):
        appeal_file(challenge=challenge, grounds="Too early.")
    for action in ("screen", "triage", "reject"):
        challenge_transition(challenge_id=challenge.pk, action=action, reason="Done.", actor=first)
    return challenge, first, second


def test_the_decider_cannot_decide_the_appeal(decided):
    challenge, first, second = decided
    appeal = appeal_file(challenge=challenge, grounds="The citation was misread.")
    with pytest.raises(PermissionRefused):
        appeal_decide(appeal_id=appeal.pk, uphold=True, reason="Agreed.", actor=first)
    decided_appeal = appeal_decide(
        appeal_id=appeal.pk, uphold=False, reason="Stands.", actor=second
    )
    assert decided_appeal.state == AppealState.DISMISSED and decided_appeal.decided_by == second


def test_appeals_are_filed_and_shown_publicly(client, decided):
    challenge, _first, _second = decided
    response = client.post(
        f"/challenges/{challenge.pk}/appeal/",
        {"grounds": "<script>x</script> The decision overlooked a source."},
    )
    assert response.status_code == 302
    page = client.get(f"/ko/challenges/{challenge.pk}/").text
    assert "overlooked a source" in page and "<script>x" not in page
    empty = client.post(f"/challenges/{challenge.pk}/appeal/", {"grounds": " "})
    assert empty.status_code == 400
