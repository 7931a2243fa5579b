"""Issue 17, "JSON nested 1,000 levels deep answers 500 on all three POST endpoints;
system-submission capability keys are unchecked (a 200,000-character key is stored; a
key with NUL answers 500 on PostgreSQL)": the API's JSON parser refuses such bodies with
a 400 in the reader's language, before any view runs, and stores nothing.

Run on PostgreSQL too (MICA_DATABASE_URL), where the NUL used to reach the database.
"""

import json

import pytest
from django.test import RequestFactory
from django.utils import translation
from django.utils.translation import gettext_lazy

from mica.parsers import TOO_DEEP, in_request_language
from submissions.models import Attempt, Challenge, SystemSubmission
from tests.factories import api_auth, attempt_payload, challenge_payload
from tests.submissions.test_system_submissions import BASE as SYSTEM_SUBMISSION

pytestmark = pytest.mark.django_db

ENDPOINTS = {
    "attempts": ("/api/v1/attempts/", attempt_payload),
    "challenges": ("/api/v1/challenges/", challenge_payload),
    "system-submissions": ("/api/v1/system-submissions/", lambda: dict(SYSTEM_SUBMISSION)),
}


def stored():
    return Attempt.objects.count() + Challenge.objects.count() + SystemSubmission.objects.count()


@pytest.fixture(params=sorted(ENDPOINTS))
def endpoint(request, client, operator):
    """(post(raw body, **headers), a sound payload) for one of the three endpoints."""
    url, payload = ENDPOINTS[request.param]

    def post(body, **headers):
        return client.post(
            url, body, content_type="application/json", **api_auth(operator), **headers
        )

    return post, payload()


def nested(depth):
    return "[" * depth + "]" * depth


def with_key(payload, key):
    """The sound payload with `key` where a filer may name keys of their own (a market's
    capability on a system submission) or as an unknown field (the others)."""
    return json.dumps({**payload, "market_capability": {key: "signed-in web"}})


def test_a_body_nested_a_thousand_levels_deep_is_refused(endpoint):
    post, _payload = endpoint
    response = post(nested(1000))
    assert response.status_code == 400
    assert response.json() == {"detail": "The JSON body is nested more than 32 levels deep."}
    response = post(json.dumps({"evidence": json.loads(nested(40))}))
    assert response.status_code == 400 and "32 levels" in response.json()["detail"]
    assert stored() == 0


def test_a_body_nested_far_beyond_the_stack_is_refused_too(endpoint):
    post, _payload = endpoint
    response = post("[" * 200_000)
    assert response.status_code == 400
    assert stored() == 0


def test_a_200000_character_key_is_refused(endpoint):
    post, payload = endpoint
    response = post(with_key(payload, "K" * 200_000))
    assert response.status_code == 400
    assert response.json() == {"detail": "A key of the JSON body is longer than 200 characters."}
    assert stored() == 0


def test_a_key_with_nul_is_refused_and_nothing_is_stored(endpoint):
    post, payload = endpoint
    response = post(with_key(payload, "a\u0000b"))
    assert response.status_code == 400
    assert "NUL" in response.json()["detail"]
    response = post(json.dumps({**payload, "memory": "a\u0000b"}))
    assert response.status_code == 400
    response = post('{"name": "\\ud800"}')
    assert response.status_code == 400
    assert stored() == 0


def test_the_refusal_speaks_the_readers_language(endpoint):
    """/api/ has no language prefix: the reader's Accept-Language chooses the catalogue."""
    post, _payload = endpoint
    korean = post(nested(1000), HTTP_ACCEPT_LANGUAGE="ko-KR,ko;q=0.9")
    assert korean.status_code == 400
    with translation.override("ko"):
        assert korean.json()["detail"] == str(TOO_DEEP) % {"limit": 32}
    request = RequestFactory().post("/api/v1/challenges/", HTTP_ACCEPT_LANGUAGE="ko")
    assert in_request_language(request, gettext_lazy("Skip to main content")) == "본문으로 건너뛰기"


def test_bodies_within_the_bounds_reach_the_view(client, operator):
    url, payload = ENDPOINTS["system-submissions"]
    body = {**payload(), "market_capability": {"K" * 200: "signed-in web"}}
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code in (201, 400)
    assert "key of the JSON body" not in response.json().get("detail", "")
    deep = {**payload(), "evidence_plan": "plan", "extra": json.loads(nested(31))}
    response = client.post(url, json.dumps(deep), content_type="application/json")
    assert "levels deep" not in response.json().get("detail", "")
    sound = client.post(url, json.dumps(payload()), content_type="application/json")
    assert sound.status_code == 201


def test_a_body_over_the_upload_bound_answers_413(endpoint, settings):
    post, payload = endpoint
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    response = post(json.dumps({**payload, "memory": "x" * 20_000}))
    assert response.status_code == 413
    assert response.json() == {
        "detail": "The request body is larger than the 10000 bytes the API accepts."
    }
    assert stored() == 0


def test_a_form_encoded_body_is_not_parsed(client, canonical_content):
    response = client.post("/api/v1/challenges/", {"what_is_wrong": "x"})  # no NUL in it
    assert response.status_code == 415


def test_a_body_that_is_not_utf8_is_refused(endpoint):
    """Found by schemathesis: a body of bytes no UTF-8 text holds (`-d '\\xff'`) answered
    500 once the parser read the body before its own refusals."""
    post, _payload = endpoint
    response = post(b"\xff\xfe{")
    assert response.status_code == 400 and stored() == 0


def test_a_json_lines_body_is_bounded_line_by_line(client, operator):
    """Issue 19: attempts also come as a JSON Lines file; each line is held to the bounds
    of a JSON body, and a line that is not JSON is refused by its number."""
    headers = {"content_type": "application/jsonl", **api_auth(operator)}
    for body, said in [
        (b"\xff\n", "JSON parse error"),
        (b"{}\n" + nested(1000).encode(), "Line 2 of the JSON Lines body"),
        (b'{"attempt_id": "a"}\n\n{oops\n', "Line 3 of the JSON Lines body"),
    ]:
        response = client.post("/api/v1/attempts/", body, **headers)
        assert response.status_code == 400 and response.json()["detail"].startswith(said)
    assert stored() == 0
