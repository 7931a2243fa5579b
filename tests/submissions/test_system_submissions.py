"""System submissions: declared composition in, immutable snapshot out, no scores or money."""

import json

import pytest
from django.contrib.admin.models import LogEntry
from django.core import mail

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


# --- Issue 19: "Future snapshot dates are accepted; a system submission gets no reference
# number and no confirmation e-mail." -------------------------------------------------


def days_from_now(days):
    from datetime import timedelta

    from django.utils import timezone

    return (timezone.now() + timedelta(days=days)).date().isoformat()


@pytest.mark.parametrize(
    "language, message",
    [
        ("en", "The snapshot date is in the future"),
        ("ko", "스냅샷 날짜가 미래입니다"),
    ],
)
def test_a_snapshot_date_in_the_future_is_refused_through_the_api(
    client, canonical_content, language, message
):
    """Seed 000: "A snapshot is identified by a stated version and date. A system that
    changes mid-evaluation is a different snapshot": a date to come names no snapshot."""
    response = client.post(
        "/api/v1/system-submissions/",
        json.dumps({**BASE, "snapshot_date": days_from_now(2)}),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
    )
    assert response.status_code == 400
    assert response.json()["errors"]["snapshot_date"][0].startswith(message)
    assert not SystemSubmission.objects.exists()


@pytest.mark.parametrize(
    "prefix, message", [("", "The snapshot date is in the future"), ("/ko", "스냅샷 날짜가 미래")]
)
def test_a_snapshot_date_in_the_future_is_refused_on_the_form(
    client, canonical_content, prefix, message
):
    form = {
        **BASE,
        "snapshot_date": days_from_now(2),
        "routable_models": "openai/gpt-x",
        "tools": "browser",
        "market_capability": "",
    }
    response = client.post(f"{prefix}/submit/system/", form)
    assert response.status_code == 400
    errors = response.context["form"].errors["snapshot_date"]
    assert errors[0].startswith(message) and message in response.text
    assert not SystemSubmission.objects.exists()


def test_today_anywhere_on_earth_is_not_in_the_future(canonical_content):
    """A snapshot frozen today in Seoul (or anywhere up to UTC+14) may carry tomorrow's UTC
    date: it is today's snapshot, not a future one. The day after that is refused."""
    from datetime import timedelta, timezone

    from django.utils import timezone as django_timezone

    kiritimati = django_timezone.now().astimezone(timezone(timedelta(hours=14))).date()
    submission = system_submission_file(payload={**BASE, "snapshot_date": kiritimati.isoformat()})
    assert submission.pk
    tomorrow_everywhere = (kiritimati + timedelta(days=1)).isoformat()
    with pytest.raises(ValidationFailed) as refused:
        system_submission_file(payload={**BASE, "snapshot_date": tomorrow_everywhere})
    assert "snapshot_date" in refused.value.field_errors


@pytest.mark.parametrize(
    "prefix, language, subject, reference_line",
    [
        ("", "en", "Your MICA system submission #", "Its reference number is"),
        ("/ko", "ko", "MICA 시스템 제출 #", "접수 번호는"),
    ],
)
def test_a_submission_gets_its_reference_number_and_a_receipt_in_its_language(
    client,
    canonical_content,
    eager_celery,
    django_capture_on_commit_callbacks,
    prefix,
    language,
    subject,
    reference_line,
):
    """Issue 19: "A system submission gets a reference number and a confirmation e-mail"."""
    form = {**BASE, "routable_models": "openai/gpt-x", "tools": "browser"}
    form.pop("market_capability")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{prefix}/submit/system/", form)
    assert response.status_code == 200, response.context["form"].errors
    submission = SystemSubmission.objects.get()
    assert submission.language == language
    assert reference_line in response.text and f"#{submission.pk}" in response.text
    receipt = next(m for m in mail.outbox if m.to == [BASE["contact_email"]])
    assert receipt.subject.startswith(f"{subject}{submission.pk} ")
    assert f"#{submission.pk}" in receipt.body
    assert f"{prefix}/submit/operators/" in receipt.body

    with django_capture_on_commit_callbacks(execute=True):
        system_submission_decide(
            submission_id=submission.pk,
            accept=False,
            reason="No tools listed.",
            actor=LeadFactory(),
        )
    decision = [m for m in mail.outbox if m.to == [BASE["contact_email"]]][-1]
    # Issue 43, item 10: the decision's subject is not the receipt's.
    assert decision.subject != receipt.subject and f"#{submission.pk}" in decision.subject
    assert "No tools listed." in decision.body


def test_the_api_answers_with_the_reference_number(
    client, canonical_content, eager_celery, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/system-submissions/", json.dumps(BASE), content_type="application/json"
        )
    assert response.status_code == 201
    submission = SystemSubmission.objects.get()
    assert response.json()["id"] == submission.pk
    assert any(f"#{submission.pk}" in m.subject for m in mail.outbox)
