"""Ingestion exactness at its edges: a key said twice, text that shows nothing, a date no
run can have. Each is refused with a named rule, in English and Korean, by every intake
(the API's JSON body, its JSON Lines body, the ingest_attempts command)."""

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from markets.models import PlatformRegistration
from submissions.models import Attempt, SystemSubmission
from tests.factories import api_auth, system_submission_payload

pytestmark = pytest.mark.django_db

URL = "/api/v1/attempts/"
SEED = Path(__file__).parents[1] / "fixtures" / "seeds"

THE_RECORD = "The raw outcome, latency and evaluation cost are the record."
FIVE_OUTCOMES = (
    "Every attempt is classified as confirmed success, unverified completion, partial "
    "progress, recoverable failure or critical failure"
)
DISCARDED_WITH_A_REASON = (
    "It is discarded with a reason before scoring, never counted as a failure."
)
SAFETY_BLOCKS = "A critical safety event permanently blocks publication of the cell it occurred in."
FIXED_BEFORE = (
    "The selected platform, version, snapshot date and ordered fallback list are fixed "
    "before systems run."
)


def test_the_seed_says_it():
    (seed,) = SEED.glob("000_*.txt")
    text = " ".join(seed.read_text(encoding="utf-8").split())
    quoted = [THE_RECORD, FIVE_OUTCOMES, DISCARDED_WITH_A_REASON, SAFETY_BLOCKS, FIXED_BEFORE]
    assert [line for line in quoted if line in text] == quoted


def post(client, user, text, content_type="application/json", language="en"):
    return client.post(
        URL, text, content_type=content_type, HTTP_ACCEPT_LANGUAGE=language, **api_auth(user)
    )


def with_outcome_twice(payload):
    """The payload as JSON text whose top object says "outcome" twice, the success last."""
    payload = {**payload, "outcome": "critical-failure"}
    text = json.dumps(payload)
    return text[:-1] + ', "outcome": "confirmed-success"}'


# --- A key said twice ------------------------------------------------------------------


def test_a_record_that_says_two_outcomes_is_refused_by_name(client, operator, payload):
    """Seed: "Every attempt is classified as confirmed success, unverified completion,
    partial progress, recoverable failure or critical failure": one of them. A record
    saying two was stored as the last one said; now it is refused."""
    answer = post(client, operator, with_outcome_twice(payload))
    assert answer.status_code == 400, answer.json()
    body = answer.json()
    assert body["errors"]["rule"] == ["duplicate-key"] and body["errors"]["key"] == ["outcome"]
    assert body["detail"].startswith('The key "outcome" appears twice')
    assert not Attempt.objects.exists()


def test_a_key_said_twice_deep_in_the_record_is_refused_too(client, operator, payload):
    text = json.dumps(payload).replace('"order": 2,', '"order": 2, "order": 1,', 1)
    assert text.count('"order": 1') == 2
    answer = post(client, operator, text)
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == ["duplicate-key"]
    assert not Attempt.objects.exists()


def test_the_refusal_of_a_key_said_twice_is_in_korean_for_a_korean_reader(
    client, operator, payload
):
    english = post(client, operator, with_outcome_twice(payload)).json()["detail"]
    korean = post(client, operator, with_outcome_twice(payload), language="ko").json()
    assert korean["errors"]["rule"] == ["duplicate-key"]
    assert korean["detail"] != english and '"outcome"' in korean["detail"]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in korean["detail"])


def test_json_lines_refuse_a_key_said_twice(client, operator, payload):
    other = {**payload, "attempt_id": "acme-kr-002", "redacted_trace_id": "trace-2"}
    lines = json.dumps(other) + "\n" + with_outcome_twice(payload) + "\n"
    answer = post(client, operator, lines, content_type="application/jsonl")
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == ["duplicate-key"]
    assert not Attempt.objects.exists()
    fine = json.dumps(other) + "\n"
    assert post(client, operator, fine, content_type="application/jsonl").status_code == 201


def test_the_command_refuses_a_key_said_twice(staff, payload, tmp_path):
    batch = tmp_path / "run.jsonl"
    batch.write_text(with_outcome_twice(payload) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 1: .*duplicate-key"):
        call_command("ingest_attempts", str(batch), "--as-user", staff.username)
    assert not Attempt.objects.exists()


def test_every_other_intake_refuses_a_key_said_twice(client, canonical_content):
    """System submissions read the same JSON body: the same rule."""
    text = json.dumps(system_submission_payload())[:-1] + ', "version": "9.9"}'
    answer = client.post("/api/v1/system-submissions/", text, content_type="application/json")
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == ["duplicate-key"]
    assert not SystemSubmission.objects.exists()


# --- Text that shows nothing -----------------------------------------------------------

INVISIBLE = ["\u200b", "\u200c \u200d", "\u2060\u00a0\ufeff", "\u3000\u200b\n"]


@pytest.mark.parametrize("reason", INVISIBLE)
def test_an_ineligible_reason_that_shows_nothing_is_no_reason(client, operator, payload, reason):
    """Seed: "It is discarded with a reason before scoring, never counted as a failure." A
    reason of whitespace and zero-width characters gives none."""
    payload.update(eligible=False, ineligible_reason=reason)
    answer = post(client, operator, json.dumps(payload))
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == ["ineligible-reason"]
    payload["ineligible_reason"] = reason + "The evaluator's mail server was down." + reason
    assert post(client, operator, json.dumps(payload)).status_code == 201


@pytest.mark.parametrize("description", INVISIBLE)
def test_a_safety_event_described_by_nothing_visible_is_undescribed(
    client, operator, payload, description
):
    """Seed: "A critical safety event permanently blocks publication of the cell it
    occurred in." It must be described, and invisible characters describe nothing."""
    payload.update(
        critical_safety_event=True,
        outcome="critical-failure",
        accuracy=0,
        safety_event_description=description,
    )
    answer = post(client, operator, json.dumps(payload), language="ko")
    body = answer.json()
    assert answer.status_code == 400 and body["errors"]["rule"] == ["safety-event-description"]
    assert body["detail"] != "A critical safety event must be described."


# --- A date no run can have ------------------------------------------------------------


def latest_day(zone="Asia/Seoul"):
    """Today in the market's time zone (KR's unless told)."""
    return timezone.now().astimezone(ZoneInfo(zone)).date()


@pytest.mark.parametrize(
    ("day", "rule"),
    [
        (date(1999, 12, 31), "date-before-2000"),
        (date(1970, 1, 1), "date-before-2000"),
        ("tomorrow", "date-in-future"),
        (date(2999, 1, 1), "date-in-future"),
    ],
)
def test_a_platform_snapshot_date_no_run_can_have_is_refused_by_name(
    client, operator, payload, day, rule
):
    """Seed: "The selected platform, version, snapshot date and ordered fallback list are
    fixed before systems run." A date to come was fixed by no one; one before 2000 is a
    typing error."""
    day = latest_day() + timedelta(days=1) if day == "tomorrow" else day
    payload["platform_snapshot_date"] = day.isoformat()
    answer = post(client, operator, json.dumps(payload))
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == [rule]
    korean = post(client, operator, json.dumps(payload), language="ko").json()
    assert korean["errors"]["rule"] == [rule] and korean["detail"] != answer.json()["detail"]
    assert not Attempt.objects.exists()


def test_tomorrow_in_the_attempts_market_is_the_future_whatever_the_hour_elsewhere(
    client, operator, monkeypatch
):
    """Issue 44: '"in the future" judged in the market's time zone (a TW date of tomorrow
    was accepted)'. At 12:00 UTC it is already tomorrow at UTC+14 but still today in
    Taipei: Taipei's tomorrow is refused, Taipei's today is accepted."""
    from tests.factories import attempt_payload

    noon = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: noon)
    taipei = ZoneInfo("Asia/Taipei")
    payload = attempt_payload(market="TW", attempt_id="acme-tw-001", situations=[])
    payload["platform_snapshot_date"] = "2026-12-08"  # today at UTC+14, tomorrow in Taipei
    answer = post(client, operator, json.dumps(payload))
    assert answer.status_code == 400 and answer.json()["errors"]["rule"] == ["date-in-future"]
    assert "market" in answer.json()["detail"]
    payload["platform_snapshot_date"] = timezone.now().astimezone(taipei).date().isoformat()
    today = post(client, operator, json.dumps(payload))
    assert today.status_code == 201, today.json()


@pytest.mark.parametrize("day", ["first", "latest"])
def test_the_first_and_the_latest_possible_dates_are_accepted(client, operator, payload, day):
    """2000-01-01, and today in the attempt's market (KR): not in the future there."""
    chosen = date(2000, 1, 1) if day == "first" else latest_day()
    if day == "first":  # a run's platform set is frozen before it: here, in 1999
        PlatformRegistration.objects.filter(
            market_edition__market__code="KR", task_family="email-calendar"
        ).update(registered_at=datetime(1999, 12, 30, tzinfo=UTC))
    payload["platform_snapshot_date"] = chosen.isoformat()
    assert post(client, operator, json.dumps(payload)).status_code == 201
    assert Attempt.objects.get().platform_snapshot_date == chosen


def test_the_command_refuses_a_date_before_2000(staff, payload, tmp_path):
    payload["platform_snapshot_date"] = "1999-12-31"
    batch = tmp_path / "run.jsonl"
    batch.write_text(json.dumps(payload) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="date-before-2000"):
        call_command("ingest_attempts", str(batch), "--as-user", staff.username)
    assert not Attempt.objects.exists()


@pytest.mark.parametrize(
    ("day", "accepted"), [("1999-12-31", False), ("2000-01-01", True), ("2999-01-01", False)]
)
def test_a_system_snapshot_date_before_2000_or_to_come_is_refused(
    client, canonical_content, day, accepted
):
    answer = client.post(
        "/api/v1/system-submissions/",
        json.dumps(system_submission_payload(snapshot_date=day)),
        content_type="application/json",
    )
    assert (answer.status_code == 201) is accepted, answer.json()
    if not accepted:
        assert "snapshot_date" in answer.json()["errors"]
