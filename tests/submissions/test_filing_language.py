"""A filing through the API is answered, and mailed, in the language it was made in.

Issue 34, item 7: "API receipts and e-mails follow the language the filing was made in (a
challenge posted with `Accept-Language: ko` gets a Korean receipt)"."""

import json

import pytest

from submissions.models import Challenge, OutboxMessage, SystemSubmission
from tests.factories import challenge_payload, system_submission_payload

pytestmark = pytest.mark.django_db


def post(client, url, payload, language):
    return client.post(
        url, json.dumps(payload), content_type="application/json", HTTP_ACCEPT_LANGUAGE=language
    )


def filed_without_a_language(client, language, django_capture_on_commit_callbacks):
    payload = challenge_payload()
    del payload["language"]
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "/api/v1/challenges/", payload, language)
    assert response.status_code == 201, response.content
    return response, Challenge.objects.get(pk=response.json()["id"])


@pytest.mark.parametrize(
    "language, next_step, subject",
    [
        ("ko", "보내 드린 링크를 열어 이메일 주소를 확인해 주세요.", "MICA 이의 제기 #{id} 접수"),
        ("en", "Confirm your e-mail address through the link we sent.", "challenge #{id} filed"),
    ],
)
def test_a_challenge_filed_through_the_api_is_answered_and_mailed_in_its_language(
    client, canonical_content, django_capture_on_commit_callbacks, language, next_step, subject
):
    response, challenge = filed_without_a_language(
        client, language, django_capture_on_commit_callbacks
    )
    assert response.json()["next"] == next_step
    assert response["Content-Language"] == language
    assert challenge.language == language
    to_filer = OutboxMessage.objects.get(to=challenge.contact_email)
    assert subject.format(id=challenge.pk) in to_filer.subject


def test_a_language_the_filing_names_outranks_the_request(
    client, canonical_content, django_capture_on_commit_callbacks
):
    """The payload's own `language` says what the filer reads, whatever their browser sends."""
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "/api/v1/challenges/", challenge_payload(language="en"), "ko")
    assert response.status_code == 201
    assert Challenge.objects.get().language == "en"


def test_a_request_in_neither_language_files_in_english(
    client, canonical_content, django_capture_on_commit_callbacks
):
    response, challenge = filed_without_a_language(client, "fr", django_capture_on_commit_callbacks)
    assert challenge.language == "en"


def test_a_system_submission_filed_in_korean_gets_a_korean_receipt(
    client, canonical_content, django_capture_on_commit_callbacks
):
    payload = system_submission_payload()
    payload.pop("language", None)
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, "/api/v1/system-submissions/", payload, "ko")
    assert response.status_code == 201, response.content
    receipt = "이 접수 번호가 적힌 접수 확인 메일을 연락용 이메일로 보냈습니다."
    assert response.json()["next"] == receipt
    submission = SystemSubmission.objects.get()
    assert submission.language == "ko"
    assert OutboxMessage.objects.filter(to=submission.contact_email).exists()
