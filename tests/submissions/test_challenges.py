"""Challenges: typed evidence, the recompute job, the workflow, privacy and inert text."""

import json

import pytest
from django.core import mail
from django.utils import translation

from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from submissions.challenges import (
    CHALLENGE_TRANSITIONS,
    challenge_confirm,
    challenge_file,
    challenge_transition,
    confirmation_token,
)
from submissions.forms import SCHEMA, ChallengeForm
from submissions.models import Challenge, ChallengeEvent, ChallengeState
from tests.factories import LeadFactory, StaffFactory, challenge_payload, confirmed_challenge

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager():
    from django.conf import settings

    from mica.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


def test_a_sound_method_challenge_is_received_privately_and_mailed(
    client, canonical_content, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/challenges/", json.dumps(challenge_payload()), content_type="application/json"
        )
    assert response.status_code == 201
    challenge = Challenge.objects.get()
    assert challenge.state == ChallengeState.RECEIVED
    assert challenge.contact_email == "challenger@example.org"
    assert "/submit/challenge/confirm/" in mail.outbox[0].body
    assert client.get(f"/challenges/{challenge.pk}/").status_code == 404
    assert client.get("/api/v1/challenges/").json()["results"] == []
    assert "challenger@example.org" not in client.get("/challenges/").text


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"section_id": "no-such-section"}, "section_id"),
        ({"edition": "preview-9"}, "edition"),
        ({"citations": []}, "citations"),
        ({"challenge_type": "locality", "market": "KR", "convention": "x"}, "channel"),
        (
            {
                "challenge_type": "locality",
                "market": "KR",
                "channel": "app",
                "convention": "x",
                "situation_id": "jp-kana-name-fields",
            },
            "situation_id",
        ),
        (
            {"challenge_type": "scoring", "claimed_metric": "accuracy", "claimed_value": 0.5},
            "scoring_inputs",
        ),
        ({"contact_email": "not-an-address"}, "contact_email"),
        ({"what_is_wrong": "x" * 20_001}, "what_is_wrong"),
    ],
)
def test_each_rule_alone_is_a_field_error(canonical_content, changes, field):
    with pytest.raises(ValidationFailed) as refused:
        challenge_file(payload=challenge_payload(**changes))
    assert field in refused.value.field_errors
    assert not Challenge.objects.exists()


def test_errors_come_in_the_submitters_language(client, canonical_content):
    response = client.post(
        "/ko/submit/challenge/",
        {
            "section_id": "no-such-section",
            "challenge_type": "method",
            "what_is_wrong": "x",
            "proposed_replacement": "y",
            "contact_email": "a@example.org",
        },
    )
    assert response.status_code == 400
    assert "섹션" in response.text and not Challenge.objects.exists()


def test_the_form_files_a_challenge_and_ignores_robots(client, canonical_content):
    form = {
        "section_id": "world-first-claim",
        "challenge_type": "editorial",
        "what_is_wrong": "Typo.",
        "proposed_replacement": "Fix it.",
        "contact_email": "a@example.org",
        "idempotency_key": "form-key-1",
    }
    assert client.post("/submit/challenge/", {**form, "website": "spam"}).status_code == 200
    assert not Challenge.objects.exists()
    assert client.post("/submit/challenge/", form).status_code == 302
    assert client.post("/submit/challenge/", form).status_code == 302  # a retry
    assert Challenge.objects.count() == 1


@pytest.mark.parametrize("claimed, reproduced", [(0.75, True), (0.8, False)])
def test_scoring_challenges_recompute_themselves(
    canonical_content, eager, claimed, reproduced, django_capture_on_commit_callbacks
):
    scoring_payload = challenge_payload(
        challenge_type="scoring",
        citations=[],
        claimed_metric="accuracy",
        claimed_value=claimed,
        scoring_inputs={
            "eligible_runs": 4,
            "successes": 3,
            "success_latencies_seconds": [10, 20, 30],
            "total_cost_usd": "0.3",
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        challenge, _created = challenge_file(payload=scoring_payload)
    challenge.refresh_from_db()
    assert challenge.recompute["recomputed"] == 0.75
    assert challenge.recompute["reproduced"] is reproduced


@pytest.mark.parametrize("state", list(ChallengeState))
@pytest.mark.parametrize("action", sorted({a for _s, a in CHALLENGE_TRANSITIONS}))
def test_every_workflow_pair(canonical_content, state, action):

    lead = LeadFactory()
    challenge = confirmed_challenge()
    Challenge.objects.filter(pk=challenge.pk).update(state=state)
    move = CHALLENGE_TRANSITIONS.get((state, action))
    actor = None if action == "withdraw" else lead
    if move is None:
        with pytest.raises(InvalidTransition):
            challenge_transition(challenge_id=challenge.pk, action=action, reason="r", actor=actor)
    else:
        moved = challenge_transition(
            challenge_id=challenge.pk,
            action=action,
            reason="Because.",
            actor=actor,
            correction={"en": "Fixed.", "ko": "고쳤습니다."},
        )
        assert moved.state == move.target
        assert ChallengeEvent.objects.filter(challenge=challenge, action=action).exists()


def test_roles_reasons_and_confirmation_are_required(canonical_content):

    editor = StaffFactory(username="editor")
    challenge, _created = challenge_file(payload=challenge_payload())
    with pytest.raises(ValidationFailed):
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="ok", actor=editor
        )  # the address is not confirmed yet
    challenge_confirm(token=confirmation_token(challenge))
    with pytest.raises(ValidationFailed):
        challenge_transition(challenge_id=challenge.pk, action="screen", reason=" ", actor=editor)
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
    )
    challenge_transition(
        challenge_id=challenge.pk, action="triage", reason="Method lead.", actor=editor
    )
    with pytest.raises(PermissionRefused):
        challenge_transition(
            challenge_id=challenge.pk, action="accept", reason="Yes.", actor=editor
        )
    with pytest.raises(ValidationFailed):
        challenge_confirm(token="forged:token")


@pytest.mark.parametrize(
    "prefix, heading, edition_words",
    [
        ("", "There is no public challenge with this number.", "edition"),
        ("/ko", "이 번호로 공개된 이의 제기가 없습니다.", "에디션"),
    ],
)
def test_an_unscreened_challenge_is_a_404_about_challenges(
    client, canonical_content, prefix, heading, edition_words
):
    challenge = confirmed_challenge()
    assert challenge.state == ChallengeState.RECEIVED
    response = client.get(f"{prefix}/challenges/{challenge.pk}/")
    assert response.status_code == 404
    body = response.text
    assert heading in body and f'href="{prefix}/challenges/"' in body
    # The general 404 text speaks of editions; a missing challenge is not about one.
    main = body.split("<main", 1)[1].split("</main>", 1)[0]
    assert edition_words not in main
    # A number never used reads the same, so the page tells no one which numbers
    # hold private challenges.
    never_used = client.get(f"{prefix}/challenges/{challenge.pk + 1000}/")
    assert never_used.status_code == 404 and never_used.text == body


def test_a_screened_challenge_is_public_and_marks_its_claim(client, canonical_content):

    editor = StaffFactory(username="editor")
    challenge = confirmed_challenge()
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
    )
    assert client.get(f"/challenges/{challenge.pk}/").status_code == 200
    assert client.get(f"/ko/challenges/{challenge.pk}/").status_code == 200
    page = client.get("/methodology/").text
    assert f'href="/challenges/{challenge.pk}/"' in page and "Under challenge" in page
    register = client.get("/challenges/?state=screened&type=method").text
    assert f"#{challenge.pk}" in register


def test_script_and_html_are_inert(client, canonical_content):

    editor = StaffFactory(username="editor")
    challenge, _created = challenge_file(
        payload=challenge_payload(
            what_is_wrong='<script>alert("x")</script><img src=x onerror=alert(1)>',
            public_name="<b>bold</b>",
        )
    )
    challenge_confirm(token=confirmation_token(challenge))
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="<i>ok</i>", actor=editor
    )
    for path in [f"/challenges/{challenge.pk}/", f"/ko/challenges/{challenge.pk}/", "/challenges/"]:
        body = client.get(path).content.decode()
        assert "<script>alert" not in body and "<img src=x" not in body and "<b>bold" not in body
    assert "&lt;script&gt;" in client.get(f"/challenges/{challenge.pk}/").content.decode()
    # The API returns the text as data, never as markup.
    api = client.get("/api/v1/challenges/")
    assert api["Content-Type"] == "application/json"
    assert api.json()["results"][0]["what_is_wrong"].startswith("<script>")


def test_unknown_or_hostile_challenge_paths(client, canonical_content):
    for path in [
        "/challenges/0/",
        "/challenges/99999999999999999999/",
        "/challenges/abc/",
        "/submit/challenge/confirm/%00/",
        "/challenges/?state=%00&market=ZZZZ",
    ]:
        assert client.get(path).status_code in (200, 400, 404)
    with translation.override("ko"):
        assert client.get("/ko/submit/challenge/confirm/nonsense/").status_code == 400


def test_the_admin_triage_queue_shows_ages_and_decides(client, canonical_content):

    lead = LeadFactory()
    client.force_login(lead)
    challenge = confirmed_challenge()
    queue = client.get("/admin/submissions/challenge/")
    assert queue.status_code == 200 and "minute" in queue.text
    client.post(
        f"/admin/submissions/challenge/{challenge.pk}/change/",
        {
            "decision": "screen",
            "reason": "In scope.",
            "events-TOTAL_FORMS": "0",
            "events-INITIAL_FORMS": "0",
        },
    )
    challenge.refresh_from_db()
    assert challenge.state == ChallengeState.SCREENED


def test_a_correction_appears_wherever_its_claim_appears(client, canonical_content):
    """The parity walk: every place the claim is rendered carries its correction."""
    from io import StringIO

    from django.core.management import call_command

    lead = LeadFactory()
    challenge = confirmed_challenge()
    for action in ("screen", "triage"):
        challenge_transition(challenge_id=challenge.pk, action=action, reason="Yes.", actor=lead)
    with pytest.raises(ValidationFailed):
        challenge_transition(
            challenge_id=challenge.pk,
            action="accept",
            reason="Right.",
            actor=lead,
            correction={"en": "Only English."},
        )
    challenge_transition(
        challenge_id=challenge.pk,
        action="accept",
        reason="Right.",
        actor=lead,
        correction={
            "en": "CORRECTED-EN the scope is narrower.",
            "ko": "정정-KO 범위는 더 좁습니다.",
        },
    )
    section = challenge.section_id
    english_places = ["/methodology/", f"/methodology/claims/{section}/"]
    korean_places = ["/ko/methodology/", f"/ko/methodology/claims/{section}/"]
    for path in english_places:
        assert "CORRECTED-EN" in client.get(path).text, path
    for path in korean_places:
        assert "정정-KO" in client.get(path).text, path
    api = client.get("/api/v1/methodology/").content.decode()
    assert "CORRECTED-EN" in api and "정정-KO" in api
    for language, marker in (("en", "CORRECTED-EN"), ("ko", "정정-KO")):
        out = StringIO()
        call_command("export_methodology", "--lang", language, stdout=out)
        assert marker in out.getvalue(), language


def test_a_flood_is_throttled_and_changes_no_public_page(client, canonical_content):
    before = client.get("/challenges/").content
    statuses = []
    for n in range(12):
        body = challenge_payload(idempotency_key=f"flood-{n}", contact_email="flood@example.org")
        statuses.append(
            client.post(
                "/api/v1/challenges/", json.dumps(body), content_type="application/json"
            ).status_code
        )
    assert statuses[:10] == [201] * 10 and statuses[10:] == [429, 429]
    assert Challenge.objects.count() == 10
    assert client.get("/challenges/").content == before


def test_notifications_go_through_the_persistent_outbox(
    canonical_content, eager, django_capture_on_commit_callbacks
):
    from django.contrib.auth.models import Permission, User

    from submissions.models import OutboxMessage, OutboxState

    # The notice of a new challenge goes to who can screen it, not to every staff account.
    screener = User.objects.create_user(
        "editor", "editor@mica.example", "pw-for-tests-only", is_staff=True
    )
    screener.user_permissions.add(Permission.objects.get(codename="change_challenge"))
    User.objects.create_user("other", "other@mica.example", "pw-for-tests-only", is_staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        challenge, _created = challenge_file(payload=challenge_payload(language="ko"))
    recipients = sorted(m.to for m in OutboxMessage.objects.all())
    assert recipients == ["challenger@example.org", "editor@mica.example"]
    assert all(m.state == OutboxState.SENT for m in OutboxMessage.objects.all())
    korean = OutboxMessage.objects.get(to="challenger@example.org")
    assert "MICA" in korean.subject and "/submit/challenge/confirm/" in korean.body
    with django_capture_on_commit_callbacks(execute=True):
        challenge_confirm(token=confirmation_token(challenge))
    editor = User.objects.get(username="editor")
    with django_capture_on_commit_callbacks(execute=True):
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
        )
    # Filed (the link), address confirmed, screened.
    assert OutboxMessage.objects.filter(to="challenger@example.org").count() == 3
    assert len(mail.outbox) == 4


def test_the_public_form_takes_its_constraints_from_the_one_challenge_schema():
    """A limit changed in ChallengeSerializer changes the form: the schema is declared once."""
    # Citations are a list in the schema and lines of text on the form; payload() parses them.
    shared = [name for name in ChallengeForm.base_fields if name in SCHEMA and name != "citations"]
    assert len(shared) >= 12
    for name in shared:
        form_field, schema = ChallengeForm.base_fields[name], SCHEMA[name]
        assert form_field.required == schema.required, name
        assert getattr(form_field, "max_length", None) == getattr(schema, "max_length", None), name
