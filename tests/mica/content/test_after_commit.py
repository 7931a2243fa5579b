"""A committed write never answers 500: the step after its commit (the content revision, the
exports and bakes that follow it) may fail, and the failure is logged and reported in
/healthz/system, never returned to the client who was told the write is stored."""

import json
import logging

import pytest

from mica.content import changes
from mica.jobs.models import JobRun, JobState
from mica.site.health import AFTER_COMMIT_JOB
from submissions.models import Attempt
from tests.factories import api_auth, attempt_payload
from tests.support import MONITOR

# A real commit in the request, so the after-commit step runs where a deployment runs it:
# inside the request, before its answer.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def failing_revision_bump(monkeypatch):
    def revisions_bump(tables, rows=None):
        raise RuntimeError("the revision table is unreachable")

    monkeypatch.setattr(changes, "revisions_bump", revisions_bump)


def test_a_failing_revision_bump_after_commit_answers_201_and_is_logged_and_reported(
    client, operator, failing_revision_bump, caplog
):
    """Issue 33, item 8: "a failure after commit is logged and reported in /healthz, never
    returned to the client"."""
    caplog.set_level(logging.ERROR)
    response = client.post(
        "/api/v1/attempts/",
        json.dumps([attempt_payload()]),
        content_type="application/json",
        **api_auth(operator),
    )
    assert response.status_code == 201, response.content
    assert Attempt.objects.count() == 1
    failures = [
        record
        for record in caplog.records
        if record.name == "mica.content.changes" and record.exc_info is not None
    ]
    assert failures, [record.getMessage() for record in caplog.records]
    assert "the revision table is unreachable" in str(failures[0].exc_info[1])
    run = JobRun.objects.get(job_name=AFTER_COMMIT_JOB)
    assert run.state == JobState.FAILED
    assert "the revision table is unreachable" in run.error
    assert "submissions_attempt" in run.arguments["tables"]
    report = client.get("/healthz/system", **MONITOR).json()
    codes = [problem["code"] for problem in report["problems"]]
    assert "after-commit-failed" in codes
    problem = report["problems"][codes.index("after-commit-failed")]
    assert problem["run"] == run.pk
    assert problem["message"]["en"] != problem["message"]["ko"]


def test_the_after_commit_step_is_a_function_django_can_name(operator):
    """Django's on_commit(robust=True) names a failed step by its __qualname__; a step
    without one turns the failure it guards against into an AttributeError."""
    from django.db import connection, transaction

    with transaction.atomic():
        # As a write of a watched table registers it (mica.content.changes.watch_writes).
        changes.content_written(connection, "submissions_attempt")
        hooks = [entry[1] for entry in connection.run_on_commit if changes.step_of(entry[1])]
        assert len(hooks) == 1
        assert hooks[0].__qualname__
        transaction.set_rollback(True)
