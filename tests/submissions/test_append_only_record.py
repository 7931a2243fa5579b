"""The whole record is append-only: attempts, their model invocations and evidence, and the
decisions that invalidate them, in the ORM, the admin, the API and the database itself.

Seed: "Scores are derived, not stored. The raw outcome, latency and evaluation cost are
the record." and "A figure that cannot be walked back along this chain is not
published." A figure follows its record, so a record edited or deleted in place would
move a published figure with no trace of why.
"""

import json
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from governance.selectors import cell_list
from mica.errors import AppendOnly, InvalidTransition, PermissionRefused, ValidationFailed
from submissions.invalidation import attempt_invalidate, invalidation_reverse
from submissions.models import (
    Attempt,
    AttemptInvalidation,
    EvidenceRecord,
    InvalidationReversal,
    ModelInvocation,
)
from tests.factories import LeadFactory, UserFactory, api_auth, attempts_post, publishable_world
from tests.factories import independent_rerun as rerun
from tests.support import database_flush

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

WALKED_BACK = "A figure that cannot be walked back along this chain is not published."
DERIVED = "Scores are derived, not stored."
THE_RECORD = "The raw outcome, latency and evaluation cost are the record."
NO_ERASURE = "There is no re-run that erases it and no appeal that removes it from the record."


SEED = Path(__file__).parents[1] / "fixtures" / "seeds"


def test_the_seed_says_it():
    (seed,) = SEED.glob("000_*.txt")
    text = seed.read_text(encoding="utf-8")
    assert {WALKED_BACK, DERIVED, THE_RECORD, NO_ERASURE} <= {
        line for line in (WALKED_BACK, DERIVED, THE_RECORD, NO_ERASURE) if line in text
    }


@pytest.fixture
def world(canonical_content, staff):
    return publishable_world()


post = attempts_post


@pytest.fixture
def recorded(client, staff, world, django_capture_on_commit_callbacks):
    """Two independent reruns that make the cell eligible, the first one invalidated."""
    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    attempt = Attempt.objects.get(attempt_id="acme-kr-001")
    with django_capture_on_commit_callbacks(execute=True):
        attempt_invalidate(attempt_id=attempt.pk, reason="A replayed run.", actor=staff)
    return attempt


def the_cell():
    return cell_list().get()


PARTS = [
    (EvidenceRecord, "sha256", "b" * 64),
    (ModelInvocation, "cost_usd", "0"),
    (AttemptInvalidation, "reason", "Never mind."),
]


@pytest.mark.parametrize(("model", "field", "value"), PARTS)
def test_the_orm_refuses_to_change_or_delete_a_part_of_the_record(recorded, model, field, value):
    """Seed: "Scores are derived, not stored." Deleting a readback removed a success and
    deleting an invalidation made a cell eligible again: neither is possible."""
    row = model.objects.filter(attempt=recorded).first()
    assert row is not None
    setattr(row, field, value)
    with pytest.raises(AppendOnly):
        row.save()
    with pytest.raises(AppendOnly):
        row.delete()
    with pytest.raises(AppendOnly):
        model.objects.filter(pk=row.pk).update(**{field: value})
    with pytest.raises(AppendOnly):
        model.objects.filter(pk=row.pk).delete()
    assert model.objects.filter(pk=row.pk).exists()


TABLES = [
    ("submissions_attempt", "wall_clock_seconds = 1"),
    ("submissions_evidencerecord", "sha256 = 'x'"),
    ("submissions_modelinvocation", "cost_usd = 0"),
    ("submissions_attemptinvalidation", "reason = 'x'"),
]


def refused(sql):
    """Whether the database refuses `sql`, told so by the record's own trigger."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    except DatabaseError as error:
        return "append-only" in str(error)
    return False


@pytest.mark.parametrize(("table", "assignment"), TABLES)
def test_raw_sql_cannot_update_or_delete_the_record(recorded, table, assignment):
    """Seed: "A figure that cannot be walked back along this chain is not published." Raw
    SQL, past the ORM, is refused by the database on SQLite and PostgreSQL alike."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")  # noqa: S608 (a fixed name)
        (before,) = cursor.fetchone()
    assert before > 0
    assert refused(f"UPDATE {table} SET {assignment}")
    assert refused(f"DELETE FROM {table}")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")  # noqa: S608
        assert cursor.fetchone() == (before,)


def test_raw_sql_cannot_update_or_delete_a_reversal(recorded, staff):
    invalidation_reverse(attempt_id=recorded.pk, reason="The replay was ours.", actor=staff)
    assert refused("UPDATE submissions_invalidationreversal SET reason = 'x'")
    assert refused("DELETE FROM submissions_invalidationreversal")


def test_truncate_is_refused_on_postgresql(recorded):
    """TRUNCATE fires no row trigger on PostgreSQL: a statement trigger refuses it there
    (SQLite has no TRUNCATE: its DELETE is refused above)."""
    if connection.vendor != "postgresql":
        assert connection.vendor == "sqlite"
        return
    # The test's own inserts leave deferred foreign-key checks pending, and PostgreSQL
    # refuses to TRUNCATE past those before any trigger runs: check them now.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert refused("TRUNCATE submissions_evidencerecord CASCADE")
    assert refused("TRUNCATE submissions_attempt CASCADE")
    assert EvidenceRecord.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_flush_still_empties_the_database_and_the_triggers_stand_after_it(
    client, canonical_content, staff
):
    """The one maintenance step that removes attempts, as the test suite flushes between
    transactional tests: allowed, and the record is append-only again after it."""
    publishable_world()
    assert post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    assert Attempt.objects.exists()
    database_flush()
    assert not Attempt.objects.exists() and not EvidenceRecord.objects.exists()
    assert not refused("DELETE FROM submissions_attempt")  # nothing left to refuse
    # Every guard stands again: the append-only ones, the parts' (and SQLite's replace and
    # transaction ones) and the named snapshot's.
    postgresql = connection.vendor == "postgresql"
    standing = {
        "mica_append_only": 10,
        "mica_record": 2 if postgresql else 9,
        "mica_frozen_submissions_systemsnapshot": 1 if postgresql else 2,
    }
    with connection.cursor() as cursor:
        for prefix, count in standing.items():
            if postgresql:
                cursor.execute(
                    "SELECT COUNT(*) FROM pg_trigger WHERE tgname LIKE %s", [prefix + "%"]
                )
            else:
                cursor.execute(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s",
                    [prefix + "%"],
                )
            assert cursor.fetchone()[0] == count, prefix


def test_an_invalidation_is_reversed_only_by_a_later_decision_with_its_reason(
    client, recorded, staff, django_capture_on_commit_callbacks
):
    """Seed: "There is no re-run that erases it and no appeal that removes it from the
    record." An invalidation is undone by a reversal kept beside it, never by deletion; the
    figures read the latest decision."""
    assert the_cell().eligible_runs == 1
    with pytest.raises(ValidationFailed):
        invalidation_reverse(attempt_id=recorded.pk, reason=" \u200b ", actor=staff)
    with pytest.raises(PermissionRefused):
        invalidation_reverse(attempt_id=recorded.pk, reason="Mine.", actor=UserFactory())
    with django_capture_on_commit_callbacks(execute=True):
        invalidation_reverse(attempt_id=recorded.pk, reason="The replay was ours.", actor=staff)
    cell = the_cell()
    assert (cell.eligible_runs, cell.invalid_runs) == (2, 0)
    assert cell.blockers == [] and cell.eligible
    reversal = InvalidationReversal.objects.get()
    assert reversal.invalidation.attempt == recorded and reversal.reason == "The replay was ours."
    assert (reversal.from_state, reversal.to_state, reversal.role) == (
        "invalidated",
        "counted",
        "staff",
    )
    assert AttemptInvalidation.objects.filter(attempt=recorded).exists()
    with pytest.raises(InvalidTransition):
        invalidation_reverse(attempt_id=recorded.pk, reason="Again.", actor=staff)
    other = Attempt.objects.get(attempt_id="acme-kr-002")
    with pytest.raises(InvalidTransition):
        invalidation_reverse(attempt_id=other.pk, reason="Never invalidated.", actor=staff)
    page = client.get(f"/evidence/{cell.cell_id}/").text
    assert "A replayed run." in page and "The replay was ours." in page


def test_the_admin_reverses_with_a_reason_and_deletes_nothing(
    client, recorded, django_capture_on_commit_callbacks
):
    client.force_login(LeadFactory())
    assert client.get(f"/admin/submissions/attempt/{recorded.pk}/delete/").status_code == 403
    page = client.get(f"/admin/submissions/attempt/{recorded.pk}/change/").text
    assert "A replayed run." in page and 'name="invalidation-0-DELETE"' not in page
    assert "evidence-0-DELETE" not in page and "invocations-0-DELETE" not in page
    without_reason = client.post(
        "/admin/submissions/attempt/",
        {"action": "reverse_invalidation", "_selected_action": [recorded.pk], "confirm": "yes"},
    )
    assert "Say why the invalidation no longer holds." in without_reason.text
    assert not InvalidationReversal.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/submissions/attempt/",
            {
                "action": "reverse_invalidation",
                "_selected_action": [recorded.pk],
                "confirm": "yes",
                "reason": "The replay was ours.",
            },
        )
    assert recorded.invalidation.reversal.reason == "The replay was ours."
    assert the_cell().eligible_runs == 2


def test_the_api_offers_no_way_to_change_or_delete_an_attempt(client, recorded, staff):
    """The API records attempts; it has no verb that changes or removes one."""
    for method in ("put", "patch", "delete"):
        answer = getattr(client, method)(
            "/api/v1/attempts/",
            json.dumps(rerun(1)),
            content_type="application/json",
            **api_auth(staff),
        )
        assert answer.status_code == 405
    evidence = EvidenceRecord.objects.count()
    assert Attempt.objects.count() == 2 and evidence == 2 * len(rerun(1)["evidence"])
