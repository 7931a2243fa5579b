"""A broker that does not answer is not a 500: filings and attempts are stored and answered
201, and their follow-up work (e-mail, recompute) goes out from the outbox and the queued
runs once the broker is back. The broker is a real Redis address at a closed port."""

import datetime
import json

import pytest
from django.core import mail
from django.utils import timezone
from kombu import pools

from mica.celery import app
from mica.jobs.models import JobRun, JobState
from mica.jobs.services import job_runs_reap
from submissions.models import Challenge, OutboxMessage, OutboxState, SystemSubmission
from submissions.outbox import outbox_sweep
from tests.factories import (
    attempt_payload,
    challenge_payload,
    system_submission_payload,
)

pytestmark = pytest.mark.django_db

NOWHERE = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def _broker(url, *, eager):
    app.conf.broker_url = url
    app.conf.task_always_eager = eager
    # Connections made for the former broker are dropped, as a fresh process would.
    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def broker_down(settings):
    """Every send goes to a Redis that does not answer; `back()` brings the broker back,
    running the jobs in this process (the real worker takes them in test_worker.py)."""
    former = app.conf.broker_url, app.conf.task_always_eager
    _broker(NOWHERE, eager=False)
    yield lambda: _broker(former[0], eager=True)
    _broker(*former[:1], eager=former[1])


@pytest.fixture(autouse=True)
def _no_runs_from_before():
    """The reaper looks at every run: each test starts with none (rolled back after)."""
    JobRun.objects.all().delete()


def _long_ago(seconds=3600):
    return timezone.now() - datetime.timedelta(seconds=seconds)


def test_a_scoring_challenge_is_stored_and_answered_201_then_sent_once_the_broker_is_back(
    client, canonical_content, broker_down, django_capture_on_commit_callbacks
):
    """Issue 31, item 6: "a filing or an attempt is stored and answered 201 when the broker
    is down, and its follow-up work (e-mail, recompute, regeneration) is queued from the
    outbox when the broker returns"."""
    scoring = challenge_payload(
        challenge_type="scoring",
        citations=[],
        claimed_metric="accuracy",
        claimed_value=0.75,
        scoring_inputs={
            "eligible_runs": 4,
            "successes": 3,
            "success_latencies_seconds": [10, 20, 30],
            "total_cost_usd": "0.3",
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/challenges/", json.dumps(scoring), content_type="application/json"
        )
    assert response.status_code == 201, response.content
    challenge = Challenge.objects.get()
    assert response.json()["id"] == challenge.pk
    receipt = OutboxMessage.objects.get(to="challenger@example.org")
    assert receipt.state == OutboxState.PENDING and receipt.attempts == 0
    recompute = JobRun.objects.get(job_name="submissions.tasks.challenge_recompute")
    assert recompute.state == JobState.QUEUED
    assert mail.outbox == []

    broker_down()  # back
    OutboxMessage.objects.update(created_at=_long_ago())
    JobRun.objects.update(due_at=_long_ago())
    with django_capture_on_commit_callbacks(execute=True):
        assert outbox_sweep() == [receipt.pk]
        assert job_runs_reap()["resent"] == [recompute.pk]
    receipt.refresh_from_db()
    assert receipt.state == OutboxState.SENT
    assert [m.to for m in mail.outbox] == [["challenger@example.org"]]
    recompute.refresh_from_db()
    assert recompute.state == JobState.SUCCEEDED, recompute.error
    challenge.refresh_from_db()
    assert challenge.recompute["reproduced"] is True


def test_a_system_submission_is_stored_and_answered_201_with_the_broker_down(
    client, canonical_content, broker_down, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/system-submissions/",
            json.dumps(system_submission_payload()),
            content_type="application/json",
        )
    assert response.status_code == 201, response.content
    assert SystemSubmission.objects.count() == 1
    assert OutboxMessage.objects.filter(state=OutboxState.PENDING).exists()
    # The sweep, the broker still down, sends nothing and gives up at the first refusal.
    OutboxMessage.objects.update(created_at=_long_ago())
    assert outbox_sweep() == []
    assert OutboxMessage.objects.filter(state=OutboxState.PENDING, attempts=0).exists()


def test_an_attempt_batch_is_stored_and_answered_201_with_the_broker_down(
    client, operator, broker_down, django_capture_on_commit_callbacks
):
    from submissions.models import Attempt
    from tests.factories import api_token

    key = api_token(operator)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/attempts/",
            json.dumps([attempt_payload()]),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Token {key}",
        )
    assert response.status_code == 201, response.content
    assert Attempt.objects.count() == 1
    # Whatever it queued (the gate's recompute) waits in the database for the reaper.
    assert not JobRun.objects.exclude(state=JobState.QUEUED).exists()


def test_the_sweep_leaves_what_is_fresh_sent_or_out_of_tries(
    canonical_content, eager_celery, django_capture_on_commit_callbacks
):
    fresh = OutboxMessage.objects.create(to="a@example.org", subject="s", body="b")
    late = OutboxMessage.objects.create(to="b@example.org", subject="s", body="b")
    sent = OutboxMessage.objects.create(
        to="c@example.org", subject="s", body="b", state=OutboxState.SENT
    )
    spent = OutboxMessage.objects.create(
        to="d@example.org", subject="s", body="b", state=OutboxState.FAILED, attempts=9
    )
    retry_lost = OutboxMessage.objects.create(
        to="e@example.org", subject="s", body="b", state=OutboxState.FAILED, attempts=3
    )
    retrying = OutboxMessage.objects.create(
        to="f@example.org", subject="s", body="b", state=OutboxState.FAILED, attempts=2
    )
    OutboxMessage.objects.filter(pk__in=[late.pk, sent.pk, spent.pk]).update(
        created_at=_long_ago(120)
    )
    OutboxMessage.objects.filter(pk=retry_lost.pk).update(created_at=_long_ago(7200))
    OutboxMessage.objects.filter(pk=retrying.pk).update(created_at=_long_ago(120))
    with django_capture_on_commit_callbacks(execute=True):
        assert sorted(outbox_sweep()) == sorted([late.pk, retry_lost.pk])
    assert sorted(m.to[0] for m in mail.outbox) == ["b@example.org", "e@example.org"]
    fresh.refresh_from_db()
    assert fresh.state == OutboxState.PENDING


def test_a_message_delivered_twice_is_mailed_once(canonical_content):
    from submissions.outbox import outbox_deliver

    message = OutboxMessage.objects.create(to="a@example.org", subject="s", body="b")
    outbox_deliver(message.pk)
    outbox_deliver(message.pk)
    assert len(mail.outbox) == 1
    message.refresh_from_db()
    assert message.state == OutboxState.SENT and message.attempts == 1
