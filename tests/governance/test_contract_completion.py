"""Completion is bound to the task's contract: a handoff proves a success only where the
contract declares it the completion point, and a contract declaring an idempotency
requirement needs its record. Ingestion refuses the record by name; the gate does not
count one that reached the table another way (kept from before the rule, or past an
intake that did not check it)."""

import json

import pytest

from governance.gate import cell_recompute
from submissions.models import Attempt
from tests.factories import api_auth, publishable_world
from tests.factories import independent_rerun as rerun

pytestmark = pytest.mark.django_db

# The e-mail and calendar family's tasks: one ending at its final state with an
# idempotency requirement (the factories' default), one ending at an approval handoff,
# and one refusal that declares no idempotency requirement.
FINAL_STATE_TASK = "ec-reschedule-three-party"
HANDOFF_TASK = "ec-formal-decline-reply"
NO_IDEMPOTENCY_TASK = "ec-colleague-mailbox-refusal"

READBACK = {"evidence_id": "ev-1", "evidence_type": "post-action-readback", "sha256": "a" * 64}
IDEMPOTENCY = {
    "evidence_id": "ev-2",
    "evidence_type": "retry-idempotency-record",
    "sha256": "b" * 64,
}
HANDOFF = {"evidence_id": "ev-3", "evidence_type": "handoff-checkpoint", "sha256": "c" * 64}


@pytest.fixture
def world(canonical_content, staff):
    # The counts read here (runs and successes) do not wait on the other tasks' reviews.
    return publishable_world(task=FINAL_STATE_TASK)


def post(client, user, payloads, language="en"):
    return client.post(
        "/api/v1/attempts/",
        json.dumps(payloads),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
        **api_auth(user),
    )


def refusal(response):
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    return errors["rule"][0], errors["detail"][0]


def successes_of_the_cell():
    attempt = Attempt.objects.first()
    cell = cell_recompute(attempt.snapshot_id, attempt.market_id, attempt.family_id)
    return cell.eligible_runs, cell.successes


# --- A handoff is completion only where the contract says so -----------------------------


def test_a_handoff_does_not_prove_a_success_on_a_task_that_ends_at_its_final_state(
    client, staff, world
):
    """Seed: "Stopping and handing back at an OTP, a carrier identity check, ... or an
    account-holder approval is valid completion when the task contract declares that
    boundary as the completion point." """
    answer = post(client, staff, [rerun(1, evidence=[HANDOFF, IDEMPOTENCY])])
    assert refusal(answer)[0] == "handoff-not-completion"
    korean = post(client, staff, [rerun(1, evidence=[HANDOFF, IDEMPOTENCY])], "ko")
    assert "완료 지점" in refusal(korean)[1]
    assert not Attempt.objects.exists()


def test_a_handoff_proves_a_success_where_the_contract_declares_the_handoff(client, staff, world):
    """Seed: "A correct stop can be completion." On an approval-handoff task the
    handoff record is the proof, with the idempotency record its contract asks for."""
    handed_back = rerun(1, task=HANDOFF_TASK, evidence=[HANDOFF, IDEMPOTENCY])
    assert post(client, staff, [handed_back]).status_code == 201
    assert successes_of_the_cell() == (1, 1)


def test_a_readback_beside_a_handoff_still_proves_the_final_state(client, staff, world):
    """A handoff on a final-state task is not proof, but it does not undo the proof the
    readback is: the success stands on the readback."""
    both = rerun(1, evidence=[READBACK, HANDOFF, IDEMPOTENCY])
    assert post(client, staff, [both]).status_code == 201
    assert successes_of_the_cell() == (1, 1)


# --- An idempotency requirement needs its record -----------------------------------------


def test_a_success_without_the_idempotency_record_its_contract_requires_is_refused(
    client, staff, world
):
    """Seed: "Where a repeat could create a second order, a second booking or a second
    charge, the task contract requires an idempotency record." """
    answer = post(client, staff, [rerun(1, evidence=[READBACK])])
    assert refusal(answer)[0] == "success-without-idempotency-record"
    korean = post(client, staff, [rerun(1, evidence=[READBACK])], "ko")
    assert "멱등성" in refusal(korean)[1]
    assert not Attempt.objects.exists()


def test_a_task_without_an_idempotency_requirement_needs_no_record(client, staff, world):
    """The record is the contract's requirement, not every task's: a task that declares
    none succeeds on its readback alone."""
    plain = rerun(1, task=NO_IDEMPOTENCY_TASK, evidence=[READBACK])
    assert post(client, staff, [plain]).status_code == 201
    assert successes_of_the_cell() == (1, 1)


def test_a_failure_needs_neither_record(client, staff, world):
    """The rules bind a success; a failure proves nothing and is recorded as it is."""
    failed = rerun(1, outcome="recoverable-failure", accuracy=0, evidence=[HANDOFF])
    assert post(client, staff, [failed]).status_code == 201
    assert successes_of_the_cell() == (1, 0)


# --- The gate counts by the same contract, whatever reached the table -------------------


@pytest.fixture
def unchecked_intake(monkeypatch):
    """Records that reached the table past an intake without the contract's rules, as
    records kept from before the rule did."""
    monkeypatch.setattr("submissions.ingest._check_contract_completion", lambda data, v: None)


def test_the_gate_does_not_count_a_handoff_on_a_final_state_task(
    client, staff, world, unchecked_intake
):
    """Seed: "valid completion when the task contract declares that boundary as the
    completion point": the gate reads the contract too."""
    records = [rerun(1, evidence=[HANDOFF, IDEMPOTENCY]), rerun(2)]
    assert post(client, staff, records).status_code == 201
    assert successes_of_the_cell() == (2, 1)


def test_the_gate_counts_a_handoff_where_the_contract_declares_it(
    client, staff, world, unchecked_intake
):
    records = [rerun(1, task=HANDOFF_TASK, evidence=[HANDOFF, IDEMPOTENCY]), rerun(2)]
    assert post(client, staff, records).status_code == 201
    assert successes_of_the_cell() == (2, 2)


def test_the_gate_does_not_count_a_success_missing_its_idempotency_record(
    client, staff, world, unchecked_intake
):
    """Seed: "the task contract requires an idempotency record": a success kept without
    it is not a confirmed success; one on a task without the requirement is."""
    records = [
        rerun(1, evidence=[READBACK]),
        rerun(2),
        rerun(3, task=NO_IDEMPOTENCY_TASK, evidence=[READBACK]),
    ]
    assert post(client, staff, records).status_code == 201
    assert successes_of_the_cell() == (3, 2)
