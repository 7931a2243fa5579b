"""The API sandbox acts for nobody (issue 44, item 1).

Finding: "The API sandbox lends the caller the real system `harbor-agent` (and another
operator's) for the call: any operator token can list that system's attempt ids and
confirm guessed field values (200 on a match, 400 otherwise), and concurrent sandbox
calls queue behind each other." Acceptance: "The sandbox uses systems of its own that
exist only inside the call, and sandbox and dry-run calls are throttled like real ones."

The real world here is the examples' own story committed for real: harbor-agent belongs to
harbor-ops, who recorded harbor-kr-0777. A stranger's sandbox calls then guess that id,
with its true content and with another."""

import json

import pytest
from django.test import Client

from submissions.api.examples import SNAPSHOT, attempt
from submissions.api.sandbox import examples_story
from submissions.models import Attempt, System
from tests.factories import UserFactory, api_auth

pytestmark = pytest.mark.django_db

ATTEMPTS = "/api/v1/attempts/"
RECORDED = attempt(attempt_id="harbor-kr-0777", redacted_trace_id="trace-harbor-kr-0777")


def post(client, user, payloads, query="?sandbox=1"):
    return client.post(
        f"{ATTEMPTS}{query}",
        json.dumps(payloads),
        content_type="application/json",
        **api_auth(user),
    )


@pytest.fixture
def harbor_ops(canonical_content, django_capture_on_commit_callbacks):
    """The real operator of harbor-agent, with one attempt of its own on record."""
    owner = UserFactory(username="harbor-ops")
    with django_capture_on_commit_callbacks(execute=True):
        examples_story(owner)
        answer = post(Client(), owner, [RECORDED], query="")
        assert answer.status_code == 201, answer.text
    return owner


def test_the_sandbox_confirms_nothing_about_a_real_systems_attempts(client, harbor_ops):
    stranger = UserFactory(username="stranger")
    system = System.objects.get(slug=SNAPSHOT["system"])
    stored = Attempt.objects.count()
    guesses = {
        "true content": [RECORDED],
        "other content": [{**RECORDED, "outcome": "recoverable-failure", "accuracy": 0}],
        "a fresh id": [{**RECORDED, "attempt_id": "harbor-kr-0999"}],
    }
    answers = {name: post(client, stranger, payloads) for name, payloads in guesses.items()}
    # As the sandbox's own harbor-agent has no harbor-kr-0777, every guess is recorded
    # there afresh: the answer is the same whether the guess matched or not.
    assert {name: a.status_code for name, a in answers.items()} == dict.fromkeys(guesses, 201)
    assert {a.json()["recorded"] for a in answers.values()} == {1}
    assert all(a.json()["sandbox"] is True for a in answers.values())
    # The answer names the examples' system as the examples do, not the sandbox's name.
    assert "sandbox-" not in answers["true content"].text
    system.refresh_from_db()
    assert system.operator_account == harbor_ops
    assert Attempt.objects.count() == stored
    assert System.objects.filter(slug__startswith="sandbox-").count() == 0


def test_the_owner_sees_the_same_sandbox_as_anyone(client, harbor_ops):
    """The owner too tries the examples in a world of the sandbox's own: its real
    attempt is no reused id there."""
    other = {**RECORDED, "outcome": "recoverable-failure", "accuracy": 0}
    answer = post(client, harbor_ops, [other])
    assert answer.status_code == 201 and answer.json()["sandbox"] is True


@pytest.mark.parametrize("query", ["?sandbox=1", "?dry_run=1", ""])
def test_sandbox_dry_run_and_real_calls_count_against_one_limit(
    client, canonical_content, settings, query
):
    settings.API_ATTEMPT_RATE = "2/minute"
    user = UserFactory(username="hurried")
    statuses = [post(client, user, [{"attempt_id": f"x-{n}"}], query).status_code for n in range(2)]
    assert 429 not in statuses
    # Whatever the kind of call, the third within the minute waits.
    for kind in ("?sandbox=1", "?dry_run=1", ""):
        assert post(client, user, [{"attempt_id": "x-9"}], kind).status_code == 429


def _documented(rule):
    """(request body, documented answer) of one refusal example of the attempts endpoint."""
    from mica.site.api_docs import api_schema

    operation = api_schema()["paths"][ATTEMPTS]["post"]
    requests = operation["requestBody"]["content"]["application/json"]["examples"]
    answers = operation["responses"]["400"]["content"]["application/json"]["examples"]
    name = next(n for n in requests if n.lower() == rule)
    return requests[name]["value"], answers[name]["value"]


@pytest.mark.vendor  # publishing an edition appends to the publication log
@pytest.mark.parametrize("rule", ["platform-unfrozen", "platform-superseded"])
def test_the_platform_examples_answer_as_documented_after_publications(
    client, canonical_content, rule
):
    """Issue 43: "`platform-unfrozen` and `platform-superseded` both answer
    `platform-unregistered` after publications": after two editions are published, each
    with its own platform sets, each example still meets the rule it documents."""
    from mica.methodology.models import Edition
    from mica.methodology.services import edition_draft_start_or_open, edition_publish
    from tests.factories import LeadFactory

    lead, first = LeadFactory(), Edition.objects.get()
    edition_publish(edition_id=first.pk, actor=lead)
    second, _started = edition_draft_start_or_open(source=first)
    edition_publish(edition_id=second.pk, actor=lead)
    body, documented = _documented(rule)
    answer = post(client, UserFactory(username="trying"), body)
    assert answer.status_code == 400
    assert answer.json()["errors"]["rule"] == documented["errors"]["rule"] == [rule]
