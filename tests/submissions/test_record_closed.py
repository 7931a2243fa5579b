"""The record is closed to every writer (issue 44): no statement rewrites a row of it, no
part is added to an attempt once it is recorded, the snapshot fields scoring reads are
frozen once an attempt names the snapshot, and no session setting lifts a trigger.

Seed: "Scores are derived, not stored. The raw outcome, latency and evaluation cost are
the record." and "A figure that cannot be walked back along this chain is not
published." Each test reproduces a way past the triggers the issue found, on SQLite and
PostgreSQL alike.
"""

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction

from submissions.models import Attempt, EvidenceRecord, ModelInvocation, SystemSnapshot
from tests.factories import LeadFactory, attempts_post, publishable_world
from tests.factories import independent_rerun as rerun
from tests.submissions.test_append_only_record import DERIVED, THE_RECORD, WALKED_BACK

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

LIFT = "SET mica.maintenance = 'on'"


@pytest.fixture
def recorded(client, staff, canonical_content, django_capture_on_commit_callbacks):
    """Two independent reruns, recorded through the API with their parts."""
    publishable_world()
    with django_capture_on_commit_callbacks(execute=True):
        assert attempts_post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    return Attempt.objects.get(attempt_id="acme-kr-001")


def refusal(sql, params=(), *, lift=True):
    """The database's refusal of `sql` (None if it ran), after PostgreSQL's old way round."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if lift and connection.vendor == "postgresql":
                cursor.execute(LIFT)
            cursor.execute(sql, params)
    except DatabaseError as error:
        return str(error)
    return None


def row(table, pk):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table} WHERE id = %s", [pk])  # noqa: S608
        return cursor.fetchone()


def test_the_seed_lines_are_the_ones_quoted():
    assert DERIVED + " " + THE_RECORD in __doc__.replace("\n", " ")
    assert WALKED_BACK in __doc__.replace("\n", " ")


# --- 1. No insert replaces a row ------------------------------------------------------


def _rewrite_attempt(*, key):
    """An insert of an attempt again, its wall-clock time changed, meeting the old row by
    its primary key or by its attempt id within the snapshot (under a fresh primary key).
    PostgreSQL has no REPLACE: its rewrite is an upsert, which is an UPDATE."""
    sqlite = connection.vendor == "sqlite"
    columns = [f.column for f in Attempt._meta.local_concrete_fields]
    fresh = "NULL" if sqlite else "id + 1000000"
    chosen = [
        "99" if c == "wall_clock_seconds" else fresh if (c, key) == ("id", "unique") else c
        for c in columns
    ]
    select = f"SELECT {', '.join(chosen)} FROM submissions_attempt WHERE id = %s"  # noqa: S608
    if sqlite:
        return f"INSERT OR REPLACE INTO submissions_attempt ({', '.join(columns)}) {select}"
    target = "(id)" if key == "primary" else "(snapshot_id, attempt_id)"
    return (
        f"INSERT INTO submissions_attempt ({', '.join(columns)}) {select} "
        f"ON CONFLICT {target} DO UPDATE SET wall_clock_seconds = 99"
    )


@pytest.mark.parametrize("key", ["primary", "unique"])
def test_an_insert_never_replaces_an_attempt(recorded, key):
    """Seed: "The raw outcome, latency and evaluation cost are the record." SQLite's
    INSERT OR REPLACE deleted the old attempt without firing its delete trigger and wrote
    a new wall-clock time in its place; PostgreSQL's upsert is an UPDATE."""
    before = row("submissions_attempt", recorded.pk)
    error = refusal(_rewrite_attempt(key=key), [recorded.pk])
    assert error is not None and "append-only" in error
    assert row("submissions_attempt", recorded.pk) == before
    assert Attempt.objects.filter(attempt_id=recorded.attempt_id).count() == 1


def test_an_insert_never_replaces_a_part_of_the_record(recorded):
    """Seed: "A figure that cannot be walked back along this chain is not published." The
    evidence a cell is walked back to is not swapped under its id."""
    evidence = recorded.evidence.first()
    before = row("submissions_evidencerecord", evidence.pk)
    values = "VALUES (%s, %s, 'forged', 'receipt', 'f')"
    columns = "(id, attempt_id, evidence_id, evidence_type, sha256)"
    if connection.vendor == "sqlite":
        sql = f"INSERT OR REPLACE INTO submissions_evidencerecord {columns} {values}"
    else:
        sql = (
            f"INSERT INTO submissions_evidencerecord {columns} {values} "
            "ON CONFLICT (id) DO UPDATE SET sha256 = 'f'"
        )
    assert refusal(sql, [evidence.pk, recorded.pk]) is not None
    assert row("submissions_evidencerecord", evidence.pk) == before


# --- 2. Parts only with their attempt, in its transaction ----------------------------


def _evidence_sql():
    return (
        "INSERT INTO submissions_evidencerecord (attempt_id, evidence_id, evidence_type, "
        "sha256) VALUES (%s, 'late-readback', 'readback', %s)"
    )


def _invocation_sql():
    return (
        'INSERT INTO submissions_modelinvocation (attempt_id, "order", provider, model, '
        "model_version, purpose, input_tokens, output_tokens, latency_seconds, cost_usd) "
        "VALUES (%s, 99, 'p', 'm', '1', 'late', 1, 1, 0.1, 0)"
    )


def _late_parts(attempt):
    return [
        EvidenceRecord(
            attempt=attempt, evidence_id="late", evidence_type="readback", sha256="a" * 64
        ),
        ModelInvocation(
            attempt=attempt,
            order=99,
            provider="p",
            model="m",
            model_version="1",
            purpose="late",
            input_tokens=1,
            output_tokens=1,
            latency_seconds=0.1,
            cost_usd=0,
        ),
    ]


def _orm_refuses_late_parts(attempt):
    for part in _late_parts(attempt):
        with pytest.raises(Exception, match="recorded with their attempt") as refused:
            part.save()
        assert refused.type.__name__ == "AppendOnly"
        with pytest.raises(Exception, match="recorded with their attempt"):
            type(part).objects.bulk_create([part])


def _database_refuses_late_parts(attempt):
    for sql, params in (
        (_evidence_sql(), [attempt.pk, "a" * 64]),
        (_invocation_sql(), [attempt.pk]),
    ):
        error = refusal(sql, params)
        assert error is not None and "only with its attempt" in error, error
        with pytest.raises(DatabaseError, match="only with its attempt"):  # autocommit
            with connection.cursor() as cursor:
                cursor.execute(sql, params)


@pytest.mark.django_db(transaction=True)
def test_no_part_is_added_to_an_attempt_once_it_is_recorded(
    client, canonical_content, staff, django_capture_on_commit_callbacks
):
    """Seed: "Scores are derived, not stored. The raw outcome, latency and evaluation cost
    are the record." Evidence added to a recorded attempt would change what the gate reads
    of it; an invocation added later would change its evaluation cost. Both are refused
    by the ORM and by the database, to raw SQL in a transaction of its own or none."""
    publishable_world()
    with django_capture_on_commit_callbacks(execute=True):
        assert attempts_post(client, staff, [rerun(1)]).status_code == 201
    attempt = Attempt.objects.get(attempt_id="acme-kr-001")
    parts = attempt.evidence.count(), attempt.invocations.count()
    assert parts[0] > 0 and parts[1] > 0  # recorded with it, in its own transaction
    _orm_refuses_late_parts(attempt)
    _database_refuses_late_parts(attempt)
    if connection.vendor == "postgresql":
        # Neither a table of the session's own nor its search_path stands in for the record.
        with pytest.raises(DatabaseError, match="only with its attempt"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "CREATE TEMP TABLE submissions_attempt AS SELECT * FROM "
                    "public.submissions_attempt"
                )
                cursor.execute("SET LOCAL search_path = pg_temp, public")
                cursor.execute(_evidence_sql(), [attempt.pk, "a" * 64])
    assert (attempt.evidence.count(), attempt.invocations.count()) == parts


def test_a_part_is_recorded_with_its_attempt_in_one_transaction(recorded):
    """What ingestion does stays allowed: parts inserted in the attempt's transaction."""
    with transaction.atomic():
        for part in _late_parts(recorded):
            part.save()  # the test's transaction recorded the attempt too
    assert recorded.evidence.filter(evidence_id="late").exists()


# --- 3. A snapshot an attempt names is frozen where scoring reads it -------------------


SCORED = [("data_status", "demo"), ("routable_models", ["x/other-model"])]


@pytest.mark.parametrize(("field", "value"), SCORED)
def test_the_orm_refuses_to_change_what_scoring_reads_of_a_named_snapshot(recorded, field, value):
    """Seed: "A figure that cannot be walked back along this chain is not published." A
    figure walks back to the snapshot's data status and models: they move no more once
    attempts name it."""
    snapshot = recorded.snapshot
    before = getattr(snapshot, field)
    setattr(snapshot, field, value)
    with pytest.raises(ValidationError) as refused:
        snapshot.full_clean()
    assert field in refused.value.message_dict
    with pytest.raises(ValidationError, match="frozen"):
        snapshot.save()
    with pytest.raises(ValidationError, match="frozen"):
        SystemSnapshot.objects.filter(pk=snapshot.pk).update(**{field: value})
    snapshot.refresh_from_db()
    assert getattr(snapshot, field) == before
    snapshot.memory = "Described better."  # not read by scoring
    snapshot.save()


@pytest.mark.parametrize(
    "assignment", ["data_status = 'demo'", "routable_models = '[\"x/other-model\"]'"]
)
def test_the_database_refuses_to_change_what_scoring_reads_of_a_named_snapshot(
    recorded, assignment
):
    snapshot = recorded.snapshot
    before = row("submissions_systemsnapshot", snapshot.pk)
    error = refusal(
        f"UPDATE submissions_systemsnapshot SET {assignment} WHERE id = %s", [snapshot.pk]
    )
    assert error is not None and "frozen" in error
    assert row("submissions_systemsnapshot", snapshot.pk) == before


def test_an_insert_never_replaces_a_named_snapshot(recorded):
    """SQLite's INSERT OR REPLACE would delete the snapshot, firing no update trigger, and
    insert it again as demo data; PostgreSQL's upsert is an UPDATE."""
    snapshot = recorded.snapshot
    before = row("submissions_systemsnapshot", snapshot.pk)
    columns = [f.column for f in SystemSnapshot._meta.local_concrete_fields]
    chosen = ", ".join("'demo'" if c == "data_status" else c for c in columns)
    select = f"SELECT {chosen} FROM submissions_systemsnapshot WHERE id = %s"  # noqa: S608
    listed = ", ".join(columns)
    if connection.vendor == "sqlite":
        sql = f"INSERT OR REPLACE INTO submissions_systemsnapshot ({listed}) {select}"
    else:
        sql = (
            f"INSERT INTO submissions_systemsnapshot ({listed}) {select} "
            "ON CONFLICT (id) DO UPDATE SET data_status = 'demo'"
        )
    error = refusal(sql, [snapshot.pk])
    assert error is not None and "frozen" in error
    assert row("submissions_systemsnapshot", snapshot.pk) == before


def test_a_snapshot_no_attempt_names_can_still_be_corrected(recorded):
    other = SystemSnapshot.objects.get(pk=recorded.snapshot.pk)
    other.pk, other.version = None, "2.2-draft"
    other._state.adding = True
    other.save()
    assert (
        refusal(
            "UPDATE submissions_systemsnapshot SET data_status = 'demo' WHERE id = %s", [other.pk]
        )
        is None
    )
    other.refresh_from_db()
    other.data_status = "preview"
    other.save()


def test_the_admin_offers_no_change_of_a_named_snapshot(client, recorded):
    """The admin's change form shows the snapshot read-only; a forged POST changes nothing
    and answers no 500."""
    snapshot = recorded.snapshot
    client.force_login(LeadFactory(is_superuser=True))
    url = f"/admin/submissions/systemsnapshot/{snapshot.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200 and 'name="data_status"' not in page.text
    answer = client.post(url, {"data_status": "demo", "routable_models": "[]"})
    assert answer.status_code in (200, 302)
    snapshot.refresh_from_db()
    assert snapshot.data_status != "demo" and snapshot.routable_models


# --- 4. No session setting lifts a trigger ---------------------------------------------


TABLES = [
    ("submissions_attempt", "wall_clock_seconds = 1"),
    ("submissions_evidencerecord", "sha256 = 'x'"),
    ("submissions_modelinvocation", "cost_usd = 0"),
    ("submissions_attemptinvalidation", "reason = 'x'"),
]


@pytest.mark.parametrize(("table", "assignment"), TABLES)
def test_no_session_setting_lifts_the_record_triggers(recorded, staff, table, assignment):
    """Seed: "Scores are derived, not stored." Any PostgreSQL session could set
    `mica.maintenance` and then rewrite or empty the record: the setting lifts nothing."""
    from submissions.invalidation import attempt_invalidate

    attempt_invalidate(attempt_id=recorded.pk, reason="A replayed run.", actor=staff)
    for sql in (f"UPDATE {table} SET {assignment}", f"DELETE FROM {table}"):
        error = refusal(sql)
        assert error is not None and "append-only" in error, sql
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # see test_append_only_record
        assert "append-only" in (refusal(f"TRUNCATE {table} CASCADE") or "")
