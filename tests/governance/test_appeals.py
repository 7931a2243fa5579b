"""Appeals: only against a decision, decided by someone other than the decider, in public."""

import pytest

from governance.models import AppealState
from governance.services import appeal_decide, appeal_file
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from submissions.challenges import appeal_token, challenge_transition
from tests.factories import (
    LeadFactory,
    SnapshotFactory,
    StaffFactory,
    api_auth,
    attempt_payload,
    confirmed_challenge,
    grant,
    references_registered,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(canonical_content):
    first = LeadFactory(username="lead-a")
    second = LeadFactory(username="lead-b")
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


def test_an_appeal_keeps_an_event_for_its_filing_and_its_decision(decided):
    """Seed L163: what must be disclosed includes "the corrections and appeals procedure" --
    so an appeal, like a challenge, keeps one append-only event per step, with its reason
    and the deciding role."""
    challenge, _first, second = decided
    appeal = appeal_file(challenge=challenge, grounds="The citation was misread.")
    appeal_decide(appeal_id=appeal.pk, uphold=True, reason="Reopened.", actor=second)
    with pytest.raises(InvalidTransition):
        appeal_decide(appeal_id=appeal.pk, uphold=False, reason="Again.", actor=second)
    events = list(appeal.events.values_list("action", "from_state", "to_state", "role", "reason"))
    assert events == [
        ("file", "", "received", "challenger", "The citation was misread."),
        ("uphold", "received", "upheld", "method-lead", "Reopened."),
    ]
    assert appeal.events.get(action="uphold").actor == second


def test_the_admin_offers_only_the_decisions_the_state_allows(client, decided):
    challenge, _first, second = decided
    appeal = appeal_file(challenge=challenge, grounds="The citation was misread.")
    client.force_login(second)
    url = f"/admin/governance/appeal/{appeal.pk}/change/"
    offered = dict(client.get(url).context["adminform"].form.fields["decision"].choices)
    assert set(offered) == {"", "uphold", "dismiss"}
    appeal_decide(appeal_id=appeal.pk, uphold=False, reason="Stands.", actor=second)
    offered = dict(client.get(url).context["adminform"].form.fields["decision"].choices)
    assert set(offered) == {""}, "a decided appeal offers no further decision"


def test_appeals_are_filed_and_shown_publicly(client, decided):
    challenge, _first, _second = decided
    response = client.post(
        f"/challenges/{challenge.pk}/appeal/",
        {
            "grounds": "<script>x</script> The decision overlooked a source.",
            "token": appeal_token(challenge),
        },
    )
    assert response.status_code == 302
    page = client.get(f"/ko/challenges/{challenge.pk}/").text
    assert "overlooked a source" in page and "<script>x" not in page
    empty = client.post(
        f"/challenges/{challenge.pk}/appeal/", {"grounds": " ", "token": appeal_token(challenge)}
    )
    assert empty.status_code == 400


def test_declared_conflicts_and_holdout_access_block_approvals(canonical_content):
    import json

    from django.test import Client

    from catalogue.models import LocalReview, TaskDefinition
    from catalogue.workflows import review_transition
    from governance.models import PersonDeclaration
    from markets.models import CompetenceRole, Market

    lead = LeadFactory()
    author = StaffFactory(username="author")
    reviewer = StaffFactory(username="reviewer")
    kr = Market.objects.get(code="KR")
    grant(author, "KR", CompetenceRole.AUTHOR, lead)
    grant(reviewer, "KR", CompetenceRole.REVIEWER, lead)
    task = TaskDefinition.objects.get(slug="ec-reschedule-three-party")
    version = references_registered(task.current_version)
    review = LocalReview.objects.create(version=version, market=kr, author=author)
    review_transition(review_id=review.pk, action="submit", actor=author)

    system = SnapshotFactory().system
    payload = attempt_payload()
    payload.update(verification="independent-rerun", situations=[])
    Client().post(
        "/api/v1/attempts/", json.dumps(payload), content_type="application/json", **api_auth(lead)
    )

    declaration = PersonDeclaration.objects.create(user=reviewer)
    declaration.conflicted_systems.add(system)
    with pytest.raises(PermissionRefused, match="conflict"):
        review_transition(review_id=review.pk, action="approve", actor=reviewer)
    declaration.conflicted_systems.clear()
    declaration.holdout_access = True
    declaration.save()
    declaration.affiliated_systems.add(system)
    with pytest.raises(PermissionRefused, match="holdout"):
        review_transition(review_id=review.pk, action="approve", actor=reviewer)
    declaration.affiliated_systems.clear()
    assert (
        review_transition(review_id=review.pk, action="approve", actor=reviewer).state == "approved"
    )


def test_withdrawn_figures_stay_visible(client, canonical_content):
    import datetime

    from governance.models import Withdrawal
    from mica.methodology.models import Edition

    Withdrawal.objects.create(
        edition=Edition.objects.get(),
        figure_en="KR accuracy",
        figure_ko="KR 정확도",
        where_en="results",
        where_ko="결과",
        original_value="0.71",
        reason_en="Not re-derivable.",
        reason_ko="다시 도출할 수 없습니다.",
        decided_on=datetime.date(2026, 11, 30),
    )
    english = client.get("/governance/").text
    assert "KR accuracy" in english and "<del>0.71</del>" in english
    assert "KR 정확도" in client.get("/ko/governance/").text
    listed = client.get("/api/v1/withdrawals/").json()
    assert [(w["figure_ko"], w["original_value"], w["corrected_value"]) for w in listed] == [
        ("KR 정확도", "0.71", "")
    ]
