"""The API reference's "Try it" console never records on a real snapshot (issue 34, item
5): it sends dry runs, which are checked and answered as a real call would be and store
nothing."""

import json

import pytest

from governance.models import GateCell
from mica.site.api_docs import api_schema
from submissions.models import Attempt
from tests.factories import api_auth, attempt_payload

pytestmark = pytest.mark.django_db

ATTEMPTS = "/api/v1/attempts/"


def post(client, user, body, dry_run=True):
    path = f"{ATTEMPTS}?dry_run=1" if dry_run else ATTEMPTS
    return client.post(path, body, content_type="application/json", **api_auth(user))


def documented_answers():
    """{example name: (status, answer body)} of the attempts endpoint, from the schema."""
    responses = api_schema()["paths"][ATTEMPTS]["post"]["responses"]
    return {
        name: (int(status), example["value"])
        for status, response in responses.items()
        for name, example in response.get("content", {})
        .get("application/json", {})
        .get("examples", {})
        .items()
    }


def test_a_dry_run_answers_as_a_real_call_and_stores_nothing(
    client, operator, django_capture_on_commit_callbacks
):
    body = json.dumps([attempt_payload()])
    """Issue 43: "`?dry_run=1` answers `201` with `"recorded": 5, "created": true` though it
    stores nothing — it answers 200 and says what would be recorded"."""
    with django_capture_on_commit_callbacks(execute=True) as after_commit:
        dry = post(client, operator, body)
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert Attempt.objects.count() == 0 and not GateCell.objects.exists()
    assert after_commit == []  # no recompute, no notice: nothing was committed
    with django_capture_on_commit_callbacks(execute=True):
        real = post(client, operator, body, dry_run=False)
    assert real.status_code == 201 and "dry_run" not in real.json()
    # The dry run said what the real call then did, and that it itself recorded nothing.
    said, done = dry.json(), real.json()
    assert (said["recorded"], said["would_record"]) == (0, done["recorded"]) == (0, 1)
    assert [(a["created"], a["would_create"]) for a in said["attempts"]] == [(False, True)]
    assert [a["scored"] for a in said["attempts"]] == [a["scored"] for a in done["attempts"]]
    assert Attempt.objects.count() == 1
    # Sent again, the dry run says nothing new would be recorded.
    again = post(client, operator, body).json()
    assert (again["would_record"], again["already_recorded"]) == (0, 1)


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_console_sends_dry_runs_in_the_sandbox_and_says_so(client, canonical_content, prefix):
    page = client.get(f"{prefix}/api/docs/").text
    assert f'data-endpoint="{ATTEMPTS}?sandbox=1"' in page
    assert "sandbox=1" in page.split('id="try-heading"')[1].split("</form>")[0]
