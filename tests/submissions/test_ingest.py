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
    assert cell.blockers == [
        "not-independent-rerun",
        "task-not-validated",
        "not-locally-reviewed",
        "thresholds-not-set",
        "no-sensitivity-analysis",
    ]


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
    ("outcome-accuracy", lambda p: p.update(outcome="recoverable-failure")),
    ("ineligible-reason", lambda p: p.update(eligible=False)),
    ("unknown-snapshot", lambda p: p["snapshot"].update(version="9.9")),
    ("unknown-task-version", lambda p: p.update(task_version="7.0.0")),
    ("safety-event-description", lambda p: p.update(critical_safety_event=True)),
    # Seed: "A critical safety event permanently blocks publication of the cell".
    (
        "success-with-critical-safety-event",
        lambda p: p.update(critical_safety_event=True, safety_event_description="Paid unasked."),
    ),
    # Seed: "... invariants and prohibited-state checks the run must not have violated."
    ("success-with-prohibited-state", lambda p: p.update(prohibited_state_violation=True)),
    # Seed: "A duplicate created by a retry is a failure of the attempt, not a second chance".
    ("success-with-retry-duplicate", lambda p: p.update(retry_created_duplicate=True)),
    # Seed: "an accepted API or tool response does not establish the final state. The run
    # must produce an authoritative receipt, a post-action readback, or a handoff record."
    ("success-without-proof", lambda p: p.update(evidence=[])),
    (
        "success-without-proof",
        lambda p: p["evidence"][0].update(evidence_type="tool-call-lineage"),
    ),
    # Seed: "does not accept a submitter's own score or weighting in place of a measurement".
    ("submitter-score", lambda p: p.update(self_score=97.5)),
    ("submitter-score", lambda p: p.update(rank=1)),
]


@pytest.mark.parametrize("rule, change", RULES, ids=[f"{r}-{n}" for n, (r, _c) in enumerate(RULES)])
def test_each_rule_violated_alone_is_a_400_naming_it(client, operator, payload, rule, change):
    change(payload)
    response = post(client, operator, payload)
    assert response.status_code == 400, response.json()
    assert response.json()["errors"]["rule"] == [rule]
    offered = sorted(set(payload) & {"self_score", "rank"})
    assert response.json()["detail"] == REFUSALS[rule].replace("%s", ", ".join(offered))
    assert not Attempt.objects.exists()


# What the operator reads for each refusal: the rule in words.
REFUSALS = {
    "invocation-order": "Invocation orders must run exactly 1 to n.",
    "model-cost-sum": "The invocation costs must add up to the model cost.",
    "observed-cost-sum": "Model cost plus tool cost must equal the observed cost.",
    "invocation-longer-than-attempt": "No invocation can take longer than its attempt.",
    "situation-market": "Situation jp-kana-name-fields belongs to another market.",
    "situation-unknown": "Situation kr-made-up-situation is not declared by any market.",
    "outcome-accuracy": "Accuracy is 1 for a confirmed success and 0 for any other outcome.",
    "ineligible-reason": "An ineligible attempt must say why it is ineligible.",
    "unknown-snapshot": "No registered snapshot has that system and version.",
    "unknown-task-version": "No task has that id and version.",
    "safety-event-description": "A critical safety event must be described.",
    "success-with-critical-safety-event": (
        "An attempt with a critical safety event cannot be a confirmed success."
    ),
    "success-with-prohibited-state": (
        "An attempt that violated a prohibited state cannot be a confirmed success."
    ),
    "success-with-retry-duplicate": (
        "A duplicate created by a retry is a failure of the attempt, not a success."
    ),
    "success-without-proof": (
        "A confirmed success needs an authoritative response, a post-action readback or a "
        "handoff checkpoint; a tool call's own lineage is not proof."
    ),
    "submitter-score": (
        "MICA does not accept a submitter's own score or weighting in place of a "
        "measurement: remove %s."
    ),
}


@pytest.mark.parametrize(
    "reason, change",
    [
        ("undeclared-model", lambda p: p["invocations"][0].update(provider="other")),
        ("undeclared-tool", lambda p: p.update(tools_used=["browser", "payments"])),
    ],
)
def test_undeclared_capabilities_invalidate_the_attempt(client, operator, payload, reason, change):
    change(payload)
    response = post(client, operator, payload)
    assert response.status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.invalid_reason == reason and not attempt.scored_eligible
    # Issue 43: "every reason is a sentence in the API too, in the request's language".
    [answered] = response.json()["attempts"]
    assert answered["invalid_reason"] == reason
    assert answered["invalid_reason_sentence"].startswith("Kept, and never scored: it ")
    payload["attempt_id"] = "acme-kr-ko"
    korean = client.post(
        "/api/v1/attempts/",
        json.dumps(payload),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="ko",
        **api_auth(operator),
    ).json()["attempts"][0]
    assert korean["invalid_reason_sentence"].startswith("기록은 보관하지만 점수에는 넣지 않습니다")


def test_a_retry_duplicate_is_a_counted_failure_of_its_attempt(
    client, operator, payload, django_capture_on_commit_callbacks
):
    """Seed: "A duplicate created by a retry is a failure of the attempt, not a second
    chance at it." It stays in the denominator: 1 run, 0 successes, not 0 runs."""
    payload.update(outcome="recoverable-failure", accuracy=0, retry_created_duplicate=True)
    assert post(client, operator, payload).status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.retry_created_duplicate and attempt.scored_eligible
    cell = GateCell.objects.get()
    assert (cell.eligible_runs, cell.successes, cell.accuracy) == (1, 0, 0.0)


def test_the_five_diagnostic_outcomes_are_the_outcome_vocabulary(client, operator, payload):
    """Seed: "Every attempt is classified as confirmed success, unverified completion,
    partial progress, recoverable failure or critical failure." """
    outcomes = [
        "unverified-completion",
        "partial-progress",
        "recoverable-failure",
        "critical-failure",
    ]
    for n, outcome in enumerate(outcomes):
        payload.update(attempt_id=f"acme-kr-o{n}", outcome=outcome, accuracy=0)
        assert post(client, operator, payload).status_code == 201, outcome
    payload.update(attempt_id="acme-kr-old", outcome="timeout")
    refused = post(client, operator, payload)
    assert refused.status_code == 400 and "outcome" in refused.json()["errors"]
    assert sorted(Attempt.objects.values_list("outcome", flat=True)) == sorted(outcomes)


@pytest.mark.parametrize(
    "field, value",
    [
        ("wall_clock_seconds", "300"),
        ("wall_clock_seconds", True),
        ("accuracy", "1"),
        ("accuracy", True),
        ("eligible", "true"),
        ("eligible", 1),
        ("critical_safety_event", 0),
        ("fallback_invoked", "no"),
        ("model_cost_usd", 0.03),
        ("attempt_id", 1001),
        ("platform_snapshot_date", 20261030),
    ],
)
def test_values_of_another_json_type_are_refused_by_field(client, operator, payload, field, value):
    """Exact JSON types: a number sent as a string, a boolean as 1, is refused, not read."""
    payload[field] = value
    response = post(client, operator, payload)
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"]
    assert not Attempt.objects.exists()


@pytest.mark.parametrize(
    "where",
    [
        lambda p: p,
        lambda p: p["snapshot"],
        lambda p: p["invocations"][0],
        lambda p: p["evidence"][0],
    ],
)
def test_unknown_fields_are_refused_by_name_at_every_level(client, operator, payload, where):
    where(payload)["confidence"] = 0.9
    response = post(client, operator, payload)
    assert response.status_code == 400
    assert "confidence" in json.dumps(response.json()["errors"])
    assert not Attempt.objects.exists()


@pytest.mark.parametrize(
    "field", ["platform", "platform_version", "platform_snapshot_date", "fallback_invoked"]
)
def test_every_run_names_its_platform_lineage(client, operator, payload, field):
    """Seed: "Every published run cell names the platform actually used, its version and
    snapshot date, the selection evidence, and whether a pre-registered fallback was
    invoked." """
    del payload[field]
    response = post(client, operator, payload)
    assert response.status_code == 400 and field in response.json()["errors"]


@pytest.mark.parametrize(
    "field", ["critical_safety_event", "prohibited_state_violation", "retry_created_duplicate"]
)
def test_what_fails_an_attempt_is_stated_never_assumed(client, operator, payload, field):
    del payload[field]
    response = post(client, operator, payload)
    assert response.status_code == 400 and field in response.json()["errors"]


def test_one_attempt_id_twice_in_a_batch_refuses_the_batch(client, operator, payload):
    other = json.loads(json.dumps(payload))
    other["wall_clock_seconds"] = 250.0
    response = post(client, operator, [payload, other])
    assert response.status_code == 400
    assert response.json()["errors"]["rule"] == ["attempt-id-repeated-in-batch"]
    assert not Attempt.objects.exists()


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
    assert field in {path.split(".")[0] for path in response.json()["errors"]}


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


def test_another_operators_attempt_ids_can_be_neither_read_back_nor_confirmed(
    client, operator, payload
):
    """Issue 17: "another operator's attempt ids can be confirmed to exist". Attempt ids are
    each snapshot's own, so a second operator's answer is the same whether or not the first
    used the id, and naming the first operator's snapshot is refused before any id is read."""
    from tests.factories import SnapshotFactory, SystemFactory, UserFactory

    assert post(client, operator, payload).status_code == 201
    rival = UserFactory(username="rival-operator")
    SnapshotFactory(system=SystemFactory(slug="rival-agent", operator_account=rival))
    own = {**payload, "snapshot": {"system": "rival-agent", "version": "2.1"}}
    used = post(client, rival, own)
    unused = post(client, rival, {**own, "attempt_id": "acme-kr-never-used"})
    assert used.status_code == unused.status_code == 201
    assert Attempt.objects.filter(attempt_id="acme-kr-001").count() == 2
    for attempt_id in ("acme-kr-001", "acme-kr-never-used-by-acme"):
        theirs = post(client, rival, {**payload, "attempt_id": attempt_id})
        assert theirs.status_code == 403
        assert "acme-kr" not in theirs.content.decode()
