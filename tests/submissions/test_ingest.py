"""Attempt ingestion over real HTTP semantics: each rule alone, batches, idempotency, bad input."""

import json

import pytest

from governance.models import GateCell
from submissions.models import Attempt
from tests.factories import api_auth

pytestmark = pytest.mark.django_db

URL = "/api/v1/attempts/"


def post(client, user, body, raw=False):
    data = body if raw else json.dumps(body)
    return client.post(URL, data, content_type="application/json", **api_auth(user))


def test_a_sound_attempt_is_recorded_and_its_cell_computed(
    client, operator, payload, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, operator, payload)
    assert response.status_code == 201, response.json()
    attempt = Attempt.objects.get(attempt_id="acme-kr-001")
    assert attempt.invocations.count() == 2 and attempt.scored_eligible
    cell = GateCell.objects.get()
    assert cell.eligible_runs == 1 and cell.successes == 1
    assert cell.blockers == ["not-independent-rerun", "thresholds-not-set"]


def test_resending_the_same_attempt_is_idempotent(client, operator, payload):
    assert post(client, operator, payload).status_code == 201
    again = post(client, operator, payload)
    assert again.status_code == 200 and again.json()["already_recorded"] == 1
    assert Attempt.objects.count() == 1
    payload["wall_clock_seconds"] = 301.0
    changed = post(client, operator, payload)
    assert changed.status_code == 400 and changed.json()["errors"]["rule"] == ["attempt-id-reused"]


def broken(rule_change):
    def apply(payload):
        rule_change(payload)
        return payload

    return apply


RULES = [
    ("invocation-order", lambda p: p["invocations"][1].update(order=3)),
    ("model-cost-sum", lambda p: p["invocations"][1].update(cost_usd="0.011000000")),
    ("observed-cost-sum", lambda p: p.update(observed_cost_usd="0.036000000")),
    ("invocation-longer-than-attempt", lambda p: p["invocations"][0].update(latency_seconds=301.0)),
    ("situation-market", lambda p: p.update(situations=["jp-kana-name-fields"])),
    ("situation-unknown", lambda p: p.update(situations=["kr-made-up-situation"])),
    ("outcome-accuracy", lambda p: p.update(outcome="timeout")),
    ("ineligible-reason", lambda p: p.update(eligible=False)),
    ("unknown-snapshot", lambda p: p["snapshot"].update(version="9.9")),
    ("unknown-task-version", lambda p: p.update(task_version="7.0.0")),
    ("safety-event-description", lambda p: p.update(critical_safety_event=True)),
]


@pytest.mark.parametrize("rule, change", RULES, ids=[r for r, _c in RULES])
def test_each_rule_violated_alone_is_a_400_naming_it(client, operator, payload, rule, change):
    change(payload)
    response = post(client, operator, payload)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"]["rule"] == [rule]
    assert not Attempt.objects.exists()


@pytest.mark.parametrize(
    "reason, change",
    [
        ("undeclared-model", lambda p: p["invocations"][0].update(provider="other")),
        ("undeclared-tool", lambda p: p.update(tools_used=["browser", "payments"])),
        ("duplicate-created-by-retry", lambda p: p.update(retry_created_duplicate=True)),
    ],
)
def test_undeclared_capabilities_invalidate_the_attempt(client, operator, payload, reason, change):
    change(payload)
    response = post(client, operator, payload)
    assert response.status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.invalid_reason == reason and not attempt.scored_eligible


def test_a_batch_is_all_or_nothing(client, operator, payload):
    second = json.loads(json.dumps(payload))
    second["attempt_id"] = "acme-kr-002"
    second["invocations"][0]["order"] = 5
    response = post(client, operator, [payload, second])
    assert response.status_code == 400
    assert response.json()["errors"]["index"] == ["1"]
    assert not Attempt.objects.exists()
    second["invocations"][0]["order"] = 1
    assert post(client, operator, [payload, second]).status_code == 201
    assert Attempt.objects.count() == 2


def test_operators_self_report_their_own_snapshots_only(client, operator, staff, payload):
    payload["verification"] = "independent-rerun"
    assert post(client, operator, payload).status_code == 403
    assert post(client, staff, payload).status_code == 201
    intruder = type(operator).objects.create_user("intruder", password="x-for-tests")
    payload["attempt_id"] = "acme-kr-003"
    payload["verification"] = "self-reported"
    assert post(client, intruder, payload).status_code == 403


def test_no_token_no_entry(client, payload):
    response = client.post(URL, json.dumps(payload), content_type="application/json")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "body",
    [
        "{not json",
        '{"wall_clock_seconds": NaN}',
        '{"wall_clock_seconds": Infinity}',
        "[1, 2]",
        '"a string"',
        "null",
    ],
)
def test_malformed_bodies_are_400(client, operator, body):
    response = post(client, operator, body, raw=True)
    assert response.status_code == 400


@pytest.mark.parametrize(
    "field, value",
    [
        ("wall_clock_seconds", "fast"),
        ("model_cost_usd", "-0.01"),
        ("observed_cost_usd", "1" + "0" * 40),
        ("wall_clock_seconds", 1e308),
        ("market", "Korea"),
        ("invocations", []),
        ("attempt_id", "has spaces"),
    ],
)
def test_wrong_types_and_huge_or_negative_numbers_are_400(client, operator, payload, field, value):
    payload[field] = value
    response = post(client, operator, payload)
    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_the_jsonl_command_is_all_or_nothing(tmp_path, operator, staff, payload):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    good = json.dumps(payload)
    bad = json.loads(good)
    bad["attempt_id"] = "acme-kr-bad"
    bad["observed_cost_usd"] = "9"
    batch = tmp_path / "attempts.jsonl"
    batch.write_text(good + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(CommandError, match="observed-cost-sum"):
        call_command("ingest_attempts", str(batch), "--as-user", staff.username)
    assert not Attempt.objects.exists()
    batch.write_text(good + "\n")
    call_command(
        "ingest_attempts", str(batch), "--as-user", staff.username, stdout=open("/dev/null", "w")
    )
    assert Attempt.objects.count() == 1
    batch.write_text('{"attempt_id": NaN}\n')
    with pytest.raises(CommandError, match="line 1"):
        call_command("ingest_attempts", str(batch), "--as-user", staff.username)
