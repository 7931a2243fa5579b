"""System submissions: declared composition in, immutable snapshot out, no scores or money."""

import json

import pytest
from django.contrib.admin.models import LogEntry

from mica.errors import InvalidTransition, ValidationFailed
from submissions.models import SubmissionState, SystemSnapshot, SystemSubmission
from submissions.system_submissions import system_submission_decide, system_submission_file
from tests.factories import LeadFactory, StaffFactory, system_submission_payload

pytestmark = pytest.mark.django_db

BASE = system_submission_payload()


@pytest.mark.parametrize(
    "extra",
    [
        {"self_score": 97},
        {"ranking": 1},
        {"weighting": {"accuracy": 0.9}},
        {"market_capability": {"KR": "x", "priority_fee": "100"}},
        {"payment_reference": "x"},
    ],
)
def test_score_ranking_weighting_and_payment_fields_are_refused(client, canonical_content, extra):
    response = client.post(
        "/api/v1/system-submissions/",
        json.dumps({**BASE, **extra}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert not SystemSubmission.objects.exists()


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"markets": ["ZZ"]}, "markets"),
        ({"families": ["fishing"]}, "families"),
        ({"routable_models": []}, "routable_models"),
        ({"snapshot_date": "yesterday"}, "snapshot_date"),
    ],
)
def test_each_field_rule(canonical_content, changes, field):
    with pytest.raises(ValidationFailed) as refused:
        system_submission_file(payload={**BASE, **changes})
    assert field in refused.value.field_errors


def test_accepting_creates_the_immutable_snapshot(client, canonical_content):
    response = client.post(
        "/api/v1/system-submissions/", json.dumps(BASE), content_type="application/json"
    )
    assert response.status_code == 201
    staff = StaffFactory(username="staff")
    submission = SystemSubmission.objects.get()
    decided = system_submission_decide(
        submission_id=submission.pk, accept=True, reason="Complete declaration.", actor=staff
    )
    assert decided.state == SubmissionState.ACCEPTED
    snapshot = SystemSnapshot.objects.get()
    assert snapshot.routable_models == ["openai/gpt-x"] and snapshot.version == "3.0"
    with pytest.raises(InvalidTransition):
        system_submission_decide(submission_id=submission.pk, accept=False, reason="x", actor=staff)


def test_the_form_in_korean_shows_field_errors(client, canonical_content):
    response = client.post("/ko/submit/system/", {"name": "X"})
    assert response.status_code == 400
    assert "필수" in response.text or "입력" in response.text


def test_staff_decide_in_the_admin(client, canonical_content):
    submission = system_submission_file(payload=BASE)
    lead = LeadFactory()
    client.force_login(lead)
    refused = client.post(
        f"/ko/admin/submissions/systemsubmission/{submission.pk}/change/",
        {"decision": "accept", "reason": ""},
        follow=True,
    )
    assert "사유" in refused.text
    # A refusal stands alone: no "changed successfully" beside it, nothing in the log.
    levels = [message.level_tag for message in refused.context["messages"]]
    assert levels == ["error"], levels
    assert not LogEntry.objects.filter(object_id=str(submission.pk)).exists()
    submission.refresh_from_db()
    assert submission.state == SubmissionState.RECEIVED
    client.post(
        f"/admin/submissions/systemsubmission/{submission.pk}/change/",
        {"decision": "accept", "reason": "Complete."},
    )
    submission.refresh_from_db()
    assert submission.state == SubmissionState.ACCEPTED and submission.snapshot is not None
    # The decision has its event, and the admin offers nothing further.
    assert list(submission.events.values_list("action", "to_state", "reason", "actor")) == [
        ("accept", "accepted", "Complete.", lead.pk)
    ]
    form = (
        client.get(f"/admin/submissions/systemsubmission/{submission.pk}/change/")
        .context["adminform"]
        .form
    )
    assert dict(form.fields["decision"].choices).keys() == {""}
