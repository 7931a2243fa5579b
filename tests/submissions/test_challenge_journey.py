"""A challenger and an appellant are never left guessing: the reference on the receipt,
the state behind the confirmation link before screening, the citations once public, a
subject that says what happened, and an appeal that reaches the people who decide it.

Seed 000, the corrections and appeals procedure is among what "must be disclosed"; the
journey walked here is the challenger's, through the real form, the real outbox (its
after-commit sends executed) and the e-mails as django.core.mail received them.
"""

import json
import re

import pytest
from django.contrib.auth.models import Permission
from django.core import mail

from governance.models import Appeal
from governance.services import appeal_decide
from submissions.challenges import appeal_token, challenge_transition, confirmation_token
from submissions.models import Challenge
from tests.factories import LeadFactory, StaffFactory, challenge_payload, confirmed_challenge

pytestmark = pytest.mark.django_db

FORM = {
    "section_id": "world-first-claim",
    "challenge_type": "method",
    "what_is_wrong": "The scope claim overlooks an earlier benchmark.",
    "proposed_replacement": "Narrow the claim.",
    "citations": "https://example.org/paper 2026-11-20",
    "contact_email": "filer@example.org",
}


@pytest.mark.parametrize(
    "prefix, words", [("", "Your reference number is #"), ("/ko", "접수 번호는 #")]
)
def test_the_filed_page_shows_the_reference_number(client, canonical_content, prefix, words):
    response = client.post(f"{prefix}/submit/challenge/", FORM)
    assert response.status_code == 302
    challenge = Challenge.objects.get()
    receipt = client.get(response["Location"])
    assert receipt.status_code == 200
    assert f"{words}{challenge.pk}" in receipt.text
    # A number typed into the link is not a receipt: the reference is signed.
    forged = client.get(f"{prefix}/submit/challenge/filed/?ref={challenge.pk}")
    assert forged.status_code == 200 and f"#{challenge.pk}" not in forged.text


@pytest.mark.parametrize(
    "prefix, received, screened",
    [("", "Received", "Screened"), ("/ko", "접수", "심사됨")],
)
def test_the_confirmation_link_shows_the_filer_the_state_before_screening(
    client, canonical_content, prefix, received, screened
):
    challenge = confirmed_challenge()
    link = f"{prefix}/submit/challenge/confirm/{confirmation_token(challenge)}/"
    page = client.get(link)
    assert page.status_code == 200
    assert f"#{challenge.pk}" in page.text and f"<dd>{received}</dd>" in page.text
    assert f'href="{prefix}/challenges/{challenge.pk}/"' not in page.text
    # Anyone else still finds nothing at the public address: nothing private leaks.
    assert client.get(f"{prefix}/challenges/{challenge.pk}/").status_code == 404
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=LeadFactory()
    )
    page = client.get(link)
    assert f"<dd>{screened}</dd>" in page.text
    assert f'href="{prefix}/challenges/{challenge.pk}/"' in page.text


def test_citations_are_public_once_screened(client, canonical_content):
    challenge = confirmed_challenge(
        citations=[
            {"source": "https://example.org/paper", "accessed": "2026-11-20"},
            {"source": "10.1000/xyz123", "accessed": "2026-11-21"},
        ]
    )
    assert client.get(f"/challenges/{challenge.pk}/").status_code == 404
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=LeadFactory()
    )
    english = client.get(f"/challenges/{challenge.pk}/").text
    assert '<a href="https://example.org/paper" rel="nofollow">' in english
    assert '<a href="https://doi.org/10.1000/xyz123" rel="nofollow">' in english
    assert "accessed 2026-11-20" in english
    korean = client.get(f"/ko/challenges/{challenge.pk}/").text
    assert "인용 출처" in korean and "2026-11-21 접속" in korean


def _challengers_subjects():
    return [m.subject for m in mail.outbox if m.to == ["challenger@example.org"]]


@pytest.mark.parametrize(
    "language, expected",
    [
        (
            "en",
            [
                "MICA challenge #{id} filed: please confirm your address",
                "MICA challenge #{id}: address confirmed",
                "MICA challenge #{id} screened: now in the public register",
                "MICA challenge #{id} triaged: awaiting the method lead's decision",
                "MICA challenge #{id} decided: rejected",
                "Appeal on MICA challenge #{id} received",
                "Appeal on MICA challenge #{id} decided: dismissed",
            ],
        ),
        (
            "ko",
            [
                "MICA 이의 제기 #{id} 접수: 이메일 주소를 확인해 주세요",
                "MICA 이의 제기 #{id}: 이메일 주소 확인 완료",
                "MICA 이의 제기 #{id} 심사 완료: 이제 공개 등록부에 실렸습니다",
                "MICA 이의 제기 #{id} 분류 완료: 방법론 책임자의 결정을 기다리는 중",
                "MICA 이의 제기 #{id} 결정: 기각됨",
                "MICA 이의 제기 #{id}에 대한 이의 신청 접수",
                "MICA 이의 제기 #{id}에 대한 이의 신청 결정: 기각됨",
            ],
        ),
    ],
)
def test_each_subject_says_what_happened_in_the_filings_language(
    client, canonical_content, eager_celery, django_capture_on_commit_callbacks, language, expected
):
    first, second = LeadFactory(username="lead-a"), LeadFactory(username="lead-b")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/challenges/",
            json.dumps(challenge_payload(language=language)),
            content_type="application/json",
        )
    assert response.status_code == 201
    challenge = Challenge.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        client.get(f"/submit/challenge/confirm/{confirmation_token(challenge)}/")
    for action in ("screen", "triage", "reject"):
        with django_capture_on_commit_callbacks(execute=True):
            challenge_transition(
                challenge_id=challenge.pk, action=action, reason="Seen.", actor=first
            )
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            f"/challenges/{challenge.pk}/appeal/",
            {"grounds": "A source was missed.", "token": appeal_token(challenge)},
        )
    with django_capture_on_commit_callbacks(execute=True):
        appeal_decide(
            appeal_id=Appeal.objects.get().pk, uphold=False, reason="Stands.", actor=second
        )
    assert _challengers_subjects() == [line.format(id=challenge.pk) for line in expected]


def test_the_accepted_held_and_withdrawn_subjects(
    canonical_content, eager_celery, django_capture_on_commit_callbacks
):
    lead = LeadFactory()
    outcomes = {
        "accept": "decided: accepted and corrected",
        "hold": "decided: held for the next edition",
        "withdraw": "withdrawn",
    }
    assert outcomes
    for action, words in outcomes.items():
        challenge = confirmed_challenge(idempotency_key=action)
        steps = ["screen", "triage", action] if action != "withdraw" else [action]
        for step in steps:
            with django_capture_on_commit_callbacks(execute=True):
                challenge_transition(
                    challenge_id=challenge.pk,
                    action=step,
                    reason="Seen.",
                    actor=None if step == "withdraw" else lead,
                    correction={"en": "Narrower.", "ko": "더 좁게."},
                )
        assert _challengers_subjects()[-1] == f"MICA challenge #{challenge.pk} {words}"


@pytest.fixture
def decided(canonical_content):
    """A rejected challenge; who decided it, who else may decide an appeal, and staff who
    may not (no permission on appeals)."""
    decider = LeadFactory(username="decider")
    other_lead = LeadFactory(username="other-lead")
    appeal_editor = StaffFactory(username="appeal-editor")
    appeal_editor.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_appeal", "change_appeal"])
    )
    bystander = StaffFactory(username="bystander", app_permissions=("submissions",))
    challenge = confirmed_challenge()
    for action in ("screen", "triage", "reject"):
        challenge_transition(challenge_id=challenge.pk, action=action, reason="No.", actor=decider)
    return challenge, decider, other_lead, appeal_editor, bystander


def test_an_appeal_reaches_the_people_who_can_decide_it_and_its_queue(
    client, decided, eager_celery, django_capture_on_commit_callbacks
):
    from mica.site.work_queues import work_queues

    challenge, decider, other_lead, appeal_editor, bystander = decided

    def queue(person):
        person = type(person).objects.get(pk=person.pk)
        return {str(q.label): q.count for q in work_queues(person)}.get(
            "Appeals awaiting a decision"
        )

    assert queue(appeal_editor) == 0 and queue(bystander) is None
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/challenges/{challenge.pk}/appeal/",
            {"grounds": "A source was missed.", "token": appeal_token(challenge)},
        )
    assert response.status_code == 302
    appeal = Appeal.objects.get()
    notices = [m for m in mail.outbox if "awaits a decision" in m.subject]
    assert sorted(to for m in notices for to in m.to) == [
        "appeal-editor@example.org",
        "other-lead@example.org",
    ]
    (notice,) = [m for m in notices if m.to == ["other-lead@example.org"]]
    assert f"/admin/governance/appeal/{appeal.pk}/change/" in notice.body
    assert "결정 대기" in notice.subject and "이의 신청" in notice.body
    assert queue(appeal_editor) == 1 and queue(other_lead) == 1
    client.force_login(appeal_editor)
    index = client.get("/admin/").text
    assert "Appeals awaiting a decision" in index
    assert "?state__exact=received" in index
    listed = client.get("/admin/governance/appeal/?state__exact=received")
    assert listed.context["cl"].result_count == 1
    client.logout()
    appeal_decide(appeal_id=appeal.pk, uphold=False, reason="Stands.", actor=other_lead)
    assert queue(appeal_editor) == 0


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_appeal_form_disappears_once_an_appeal_is_filed(client, decided, prefix):
    challenge = decided[0]
    token = appeal_token(challenge)
    page = client.get(f"{prefix}/challenges/{challenge.pk}/appeal/?token={token}").text
    assert 'name="grounds"' in page
    response = client.post(
        f"{prefix}/challenges/{challenge.pk}/appeal/",
        {"grounds": "A source was missed.", "token": token},
    )
    assert response.status_code == 302
    page = client.get(f"{prefix}/challenges/{challenge.pk}/").text
    assert 'name="grounds"' not in page and "A source was missed." in page
    # A second appeal sent anyway (an old tab) is refused in words, and not stored.
    again = client.post(
        f"{prefix}/challenges/{challenge.pk}/appeal/", {"grounds": "Again.", "token": token}
    )
    assert again.status_code == 400
    words = "already been appealed" if not prefix else "이미 이의 신청이 접수"
    assert words in again.text and 'role="alert"' in again.text
    assert Appeal.objects.count() == 1
    assert not re.search(r"<form[^>]*appeal", again.text)
