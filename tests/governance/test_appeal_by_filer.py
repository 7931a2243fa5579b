"""The appeal is the challenger's (issue 43, item 3).

Finding: "Today any anonymous stranger can file the one appeal a decided challenge allows:
the challenger's form then disappears and the stranger's grounds are published. Only the
filer can appeal, through a signed link in their e-mail (as the confirmation link works);
any other POST is refused and changes nothing." Acceptance: "an appeal by a stranger is
refused and the challenger's link works".

The challenge is decided through the service, its after-commit sends executed, and the
challenger's link is taken from the decision e-mail as django.core.mail received it.
"""

import re
from urllib.parse import urlsplit

import pytest
from django.core import mail

from governance.models import Appeal
from submissions.challenges import appeal_token, challenge_transition
from tests.factories import LeadFactory, confirmed_challenge

pytestmark = pytest.mark.django_db

REFUSAL = {
    "": "Only the challenger can appeal this decision",
    "/ko": "이 결정에 대한 이의 신청은 이의 제기자만",
}
HOW = {
    "": "The challenger may appeal this decision once, through the link in the e-mail",
    "/ko": "이의 제기자는 결정을 알린 이메일의 링크로",
}


def decide(challenge, lead, django_capture_on_commit_callbacks):
    for action in ("screen", "triage", "reject"):
        with django_capture_on_commit_callbacks(execute=True):
            challenge_transition(
                challenge_id=challenge.pk, action=action, reason="Seen.", actor=lead
            )


def decision_link(challenge):
    """The appeal link in the decision e-mail to the challenger, as a path and query."""
    (decision,) = [
        m
        for m in mail.outbox
        if m.to == [challenge.contact_email] and f"#{challenge.pk}" in m.subject
        if "rejected" in m.subject or "기각됨" in m.subject
    ]
    (link,) = re.findall(r"\S+/challenges/\d+/appeal/\?token=\S+", decision.body)
    words = "Only you can file it" if challenge.language == "en" else "본인만 할 수 있으며"
    assert words in decision.body
    # Only the decision carries the key: the earlier steps' e-mails do not.
    earlier = [m for m in mail.outbox if m.to == [challenge.contact_email] and m is not decision]
    assert earlier and not any("/appeal/" in m.body for m in earlier)
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


@pytest.fixture
def decided(canonical_content, eager_celery, django_capture_on_commit_callbacks):
    lead = LeadFactory()
    challenge = confirmed_challenge()
    decide(challenge, lead, django_capture_on_commit_callbacks)
    return challenge


def has_form(page):
    return 'name="grounds"' in page or re.search(r"<form[^>]*appeal", page) is not None


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_a_strangers_appeal_is_refused_and_changes_nothing(client, decided, prefix):
    """The finding, reproduced: an anonymous POST without a key used to file the appeal
    (302, an Appeal row, the stranger's grounds on the page, the form gone)."""
    challenge = decided
    page = client.get(f"{prefix}/challenges/{challenge.pk}/").text
    assert not has_form(page) and HOW[prefix] in page
    response = client.post(
        f"{prefix}/challenges/{challenge.pk}/appeal/", {"grounds": "A stranger's grounds."}
    )
    assert response.status_code == 403
    assert REFUSAL[prefix] in response.text and 'role="alert"' in response.text
    assert not has_form(response.text)
    assert not Appeal.objects.exists()
    page = client.get(f"{prefix}/challenges/{challenge.pk}/").text
    assert "A stranger's grounds." not in page and not has_form(page) and HOW[prefix] in page
    # Nor does opening the address without a key show the form.
    opened = client.get(f"{prefix}/challenges/{challenge.pk}/appeal/")
    assert opened.status_code == 403 and not has_form(opened.text)


def test_a_forged_key_or_another_challenges_key_is_refused(
    client, decided, django_capture_on_commit_callbacks
):
    challenge = decided
    other = confirmed_challenge(idempotency_key="other")
    decide(other, LeadFactory(username="lead-other"), django_capture_on_commit_callbacks)
    url = f"/challenges/{challenge.pk}/appeal/"
    genuine = appeal_token(challenge)
    for token in (
        "forged",
        genuine[:-2] + ("AA" if not genuine.endswith("AA") else "BB"),
        appeal_token(other),
    ):
        posted = client.post(url, {"grounds": "Forged.", "token": token})
        assert posted.status_code == 403 and REFUSAL[""] in posted.text
        in_query = client.post(f"{url}?token={token}", {"grounds": "Forged."})
        assert in_query.status_code == 403
        assert client.get(f"{url}?token={token}").status_code == 403
    assert not Appeal.objects.exists()


@pytest.mark.parametrize("language, prefix", [("en", ""), ("ko", "/ko")])
def test_the_challengers_link_from_the_decision_email_files_the_appeal(
    client, canonical_content, eager_celery, django_capture_on_commit_callbacks, language, prefix
):
    challenge = confirmed_challenge(language=language)
    decide(challenge, LeadFactory(), django_capture_on_commit_callbacks)
    link = decision_link(challenge)
    assert link.startswith(f"{prefix}/challenges/{challenge.pk}/appeal/?token=")
    shown = client.get(link)
    assert shown.status_code == 200 and has_form(shown.text)
    token = appeal_token(challenge)
    assert f'name="token" value="{token}"' in shown.text
    posted = client.post(
        f"{prefix}/challenges/{challenge.pk}/appeal/",
        {"grounds": "The decision overlooked a source.", "token": token},
    )
    assert posted.status_code == 302
    assert Appeal.objects.get(challenge=challenge).grounds == "The decision overlooked a source."
    page = client.get(f"{prefix}/challenges/{challenge.pk}/").text
    assert "The decision overlooked a source." in page and not has_form(page)
    # The link, opened again, no longer offers a form: one appeal a decision.
    again = client.get(link)
    assert again.status_code == 200 and not has_form(again.text)


def test_the_link_keeps_the_rules_grounds_required_and_one_appeal(client, decided):
    challenge = decided
    url = f"/challenges/{challenge.pk}/appeal/"
    token = appeal_token(challenge)
    empty = client.post(url, {"grounds": " ", "token": token})
    assert empty.status_code == 400 and has_form(empty.text)
    assert not Appeal.objects.exists()
    assert client.post(url, {"grounds": "First.", "token": token}).status_code == 302
    second = client.post(url, {"grounds": "Second.", "token": token})
    assert second.status_code == 400 and "already been appealed" in second.text
    assert list(Appeal.objects.values_list("grounds", flat=True)) == ["First."]
