"""An operator works from the API schema alone, over real HTTP.

Issue 19, item 5: "An operator-flow test uses only what `/api/schema/` documents to
record a valid batch and to read each documented error." The schema is fetched from the
live server; every request body below is one of its request examples, every answer is
compared with its response example of the same name, and the token goes in the header
its security scheme names. What an operator cannot do through the API (MICA staff
accepting the submission and issuing the token) is done as staff do it.
"""

import json
import urllib.error
import urllib.request

import pytest
import yaml
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail

from submissions.api.sandbox import examples_story
from submissions.api.views import attempt_batch_max as maximum
from submissions.models import Attempt, System, SystemSubmission
from submissions.system_submissions import system_submission_decide
from tests.factories import (
    StaffFactory,
    UserFactory,
    api_token,
)

pytestmark = pytest.mark.django_db(transaction=True)

User = get_user_model()

SUBMISSIONS = "/api/v1/system-submissions/"
ATTEMPTS = "/api/v1/attempts/"
CHALLENGES = "/api/v1/challenges/"


class Api:
    """An HTTP client of the live server, as an operator's script is."""

    def __init__(self, base):
        self.base = base

    def send(self, path, *, method="GET", body=None, headers=None, raw=None):
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json", **(headers or {})},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as refused:
            return refused.code, refused.read().decode()

    def json(self, path, **kwargs):
        status, text = self.send(path, **kwargs)
        return status, json.loads(text)


def read_schema(api, language):
    status, text = api.send("/api/schema/", headers={"Accept-Language": language})
    assert status == 200
    return yaml.safe_load(text)


def documented(schema, path):
    """The operation's request examples and its answers: {status: {name: body}}."""
    operation = schema["paths"][path]["post"]
    requests = operation["requestBody"]["content"]["application/json"]["examples"]
    answers = {
        status: response.get("content", {}).get("application/json", {}).get("examples", {})
        for status, response in operation["responses"].items()
    }
    return (
        {name: example["value"] for name, example in requests.items()},
        {
            status: {name: example["value"] for name, example in examples.items()}
            for status, examples in answers.items()
        },
    )


def token_header(schema, key):
    """The header the token scheme names, with the prefix its description gives."""
    scheme = schema["components"]["securitySchemes"]["tokenAuth"]
    assert scheme["in"] == "header" and "Token <key>" in scheme["description"]
    assert "/submit/operators/" in scheme["description"]  # how to get one
    return {scheme["name"]: f"Token {key}"}


def provoke(api, path, status, name, requests, auth):
    """Send the request that the answer `name` documents: its own request example, or,
    for an answer any request can get, the request the answer describes."""
    if name in requests:
        return api.json(path, method="POST", body=requests[name], headers=auth)
    valid = next(iter(requests.values()))
    if status == "401":
        others = {key: value for key, value in auth.items() if key != "Authorization"}
        if name != "No-token":
            others["Authorization"] = "Token not-a-token"
        return api.json(path, method="POST", body=valid, headers=others)
    if status == "413" and name == "Too-many-attempts":
        # A valid attempt, once more than the documented maximum of a batch.
        return api.json(path, method="POST", body=[valid[0]] * (maximum() + 1), headers=auth)
    if status == "413":
        raw = b" " * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)
        return api.json(path, method="POST", raw=raw, headers=auth)
    if status == "415":
        return api.json(
            path, method="POST", raw=b"x", headers={**auth, "Content-Type": "text/plain"}
        )
    raise AssertionError(f"no way to provoke {status} {name}")


def read_every_error(api, path, requests, answers, auth, skip=()):
    """Every documented error answer of `path`, provoked and compared; how many were read."""
    read = 0
    for status, examples in answers.items():
        if status.startswith("2") or status in skip:
            continue
        assert examples, f"{path} documents {status} without an example"
        for name, body in examples.items():
            got_status, got = provoke(api, path, status, name, requests, auth)
            assert (str(got_status), got) == (status, body), f"{path} {status} {name}"
            read += 1
    return read


@pytest.fixture
def api(live_server, canonical_content, settings, eager_celery):
    settings.SITE_URL = live_server.url
    return Api(live_server.url)


def register_the_example_system(api, schema):
    """The operator files the schema's example submission; staff accept it, link it to the
    operator's account and issue the token."""
    requests, answers = documented(schema, SUBMISSIONS)
    status, received = api.json(SUBMISSIONS, method="POST", body=requests["Harbor-agent"])
    properties = schema["components"]["schemas"]["SystemSubmissionReceived"]["properties"]
    assert status == 201 and set(received) == set(properties)
    submission = SystemSubmission.objects.get(pk=received["id"])
    receipt = next(m for m in mail.outbox if m.to == [requests["Harbor-agent"]["contact_email"]])
    assert f"#{submission.pk}" in receipt.subject and f"#{submission.pk}" in receipt.body
    system_submission_decide(
        submission_id=submission.pk, accept=True, reason="Complete.", actor=StaffFactory()
    )
    operator = UserFactory(username="harbor-ops")
    System.objects.filter(snapshots__submission=submission).update(operator_account=operator)
    return api_token(operator), requests, answers


def test_an_operator_records_a_batch_and_reads_every_error_from_the_schema(api):
    schema = read_schema(api, "en")
    key, submission_requests, submission_answers = register_the_example_system(api, schema)
    auth = token_header(schema, key)
    # The rest of the examples' story, as the console's sandbox stages it: another
    # operator's snapshot (`not-own-snapshot`), the superseded and the draft platform sets
    # the platform refusals name, and the operator's earlier attempt (`attempt-id-reused`).
    examples_story(User.objects.get(username="harbor-ops"))
    earlier = Attempt.objects.count()

    requests, answers = documented(schema, ATTEMPTS)
    status, recorded = api.json(ATTEMPTS, method="POST", body=requests["Valid-batch"], headers=auth)
    assert (status, recorded) == (201, answers["201"]["Valid-batch"])
    assert Attempt.objects.filter(snapshot__system__slug="harbor-agent").count() == earlier + 2

    read = {"en": read_every_error(api, ATTEMPTS, requests, answers, auth)}
    # The same schema in Korean documents the same answers, in Korean.
    korean = read_schema(api, "ko")
    ko_requests, ko_answers = documented(korean, ATTEMPTS)
    assert ko_answers["400"]["Schema"] != answers["400"]["Schema"]
    ko_auth = {**token_header(korean, key), "Accept-Language": "ko"}
    read["ko"] = read_every_error(api, ATTEMPTS, ko_requests, ko_answers, ko_auth)
    # rules; 401s; 413s (the body, the batch); 415
    assert read["en"] == read["ko"] == len(requests) - 1 + 2 + 2 + 1
    assert Attempt.objects.count() == earlier + 2  # no refusal stored anything

    # Sending the batch again records nothing new: the documented 200.
    status, again = api.json(ATTEMPTS, method="POST", body=requests["Valid-batch"], headers=auth)
    assert status == 200 and again["already_recorded"] == len(requests["Valid-batch"])

    # The gate's answer: the cell of the batch, withheld with its reasons.
    status, cells = api.json("/api/v1/cells/")
    cell = next(c for c in cells["results"] if c["system"] == "harbor-agent")
    assert "not-independent-rerun" in cell["blockers"] and not cell["publication_eligible"]

    # The intake endpoints' documented errors, the intake limit last.
    read_every_error(api, SUBMISSIONS, submission_requests, submission_answers, {}, skip=("429",))
    challenge_requests, challenge_answers = documented(schema, CHALLENGES)
    status, _filed = api.json(
        CHALLENGES, method="POST", body=challenge_requests["Method-challenge"]
    )
    assert status == 201
    read_every_error(api, CHALLENGES, challenge_requests, challenge_answers, {}, skip=("429",))
    limited = challenge_requests["Method-challenge"]
    for number in range(30):
        status, answer = api.json(
            CHALLENGES, method="POST", body={**limited, "idempotency_key": f"again-{number}"}
        )
        if status == 429:
            break
    assert answer == challenge_answers["429"]["Throttled"]


def test_on_a_fresh_install_every_documented_example_answers_as_documented_in_the_sandbox(
    api,
):
    """Issue 34: the console "runs against a sandbox ... and every documented error example
    gives the documented answer on a fresh install". A new operator with a token and no
    snapshot sends each of the schema's examples as the console does (sandbox=1), in
    English and Korean; afterwards nothing of the story or of the batches is stored."""
    from markets.models import PlatformRegistration

    key = api_token(UserFactory(username="new-operator"))
    registrations = PlatformRegistration.objects.count()
    sandboxed = f"{ATTEMPTS}?sandbox=1"
    read = {}
    for language in ("en", "ko"):
        schema = read_schema(api, language)
        requests, answers = documented(schema, ATTEMPTS)
        auth = {**token_header(schema, key), "Accept-Language": language}
        status, recorded = api.json(
            sandboxed, method="POST", body=requests["Valid-batch"], headers=auth
        )
        assert status == 201
        assert recorded == {**answers["201"]["Valid-batch"], "dry_run": True, "sandbox": True}
        read[language] = read_every_error(api, sandboxed, requests, answers, auth)
    assert read["en"] == read["ko"] == len(requests) - 1 + 2 + 2 + 1
    assert not Attempt.objects.exists()
    assert not System.objects.filter(slug__in=["harbor-agent", "another-operators-agent"])
    assert PlatformRegistration.objects.count() == registrations


def test_a_batch_from_a_json_lines_file_is_recorded_as_the_same_batch(api):
    """The operator guide: "A run that writes one attempt record a line sends its file as it
    is, with the JSON Lines content type." """
    schema = read_schema(api, "en")
    key, _requests, _answers = register_the_example_system(api, schema)
    assert "application/jsonl" in schema["paths"][ATTEMPTS]["post"]["requestBody"]["content"]
    requests, answers = documented(schema, ATTEMPTS)
    lines = "\n".join(json.dumps(a) for a in requests["Valid-batch"]) + "\n\n"
    headers = {**token_header(schema, key), "Content-Type": "application/jsonl"}
    status, recorded = api.json(ATTEMPTS, method="POST", raw=lines.encode(), headers=headers)
    assert (status, recorded) == (201, answers["201"]["Valid-batch"])
    broken = lines.replace("}\n", "}\n{not json\n", 1)
    status, refused = api.json(ATTEMPTS, method="POST", raw=broken.encode(), headers=headers)
    assert status == 400 and refused["detail"].startswith("Line 2 of the JSON Lines body")
