"""The record refuses change in the database itself, not only in the ORM.

Seed: "Scores are derived, not stored. The raw outcome, latency and evaluation cost
are the record." and "A figure that cannot be walked back along this chain is not
published." The models refuse to save a row twice or delete one
(submissions.models.AppendOnlyRecord); these triggers refuse the same to any SQL,
raw or not, on the tables of the record: attempts, their model invocations and
evidence, invalidations and their reversals.

PostgreSQL: one plpgsql function raises for UPDATE, DELETE and TRUNCATE unless the
session set `mica.maintenance` to `on`. SQLite has no session settings: its triggers
are dropped and made again around a maintenance step, in one transaction (SQLite
writes one transaction at a time, so no other write meets the gap).

Maintenance is the flush that empties the whole database (tests between
transactional cases, `manage.py flush`): `record_maintenance()` wraps it
(submissions/management/commands/flush.py). A restore replaces the database whole:
SQLite's backup API copies pages and pg_restore --clean drops the tables, and
neither fires a row trigger; the restored database carries its triggers.
"""

from contextlib import contextmanager

from django.db import connection as default_connection
from django.db import transaction

RECORD_TABLES = (
    "submissions_attempt",
    "submissions_modelinvocation",
    "submissions_evidencerecord",
    "submissions_attemptinvalidation",
    "submissions_invalidationreversal",
)
OPERATIONS = ("UPDATE", "DELETE")
MESSAGE = "MICA: %s is append-only: the record is never changed or deleted"

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION mica_record_append_only() RETURNS trigger AS $$
BEGIN
    IF current_setting('mica.maintenance', true) = 'on' THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;  -- NULL for TRUNCATE, whose statement trigger's return is ignored
    END IF;
    RAISE EXCEPTION 'MICA: % is append-only: the record is never changed or deleted (%)',
        TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql
"""


def _pg_triggers(table):
    return [
        f"DROP TRIGGER IF EXISTS mica_append_only_rows ON {table}",
        f"CREATE TRIGGER mica_append_only_rows BEFORE UPDATE OR DELETE ON {table} "
        "FOR EACH ROW EXECUTE FUNCTION mica_record_append_only()",
        # TRUNCATE fires no row trigger: a statement trigger refuses it too.
        f"DROP TRIGGER IF EXISTS mica_append_only_truncate ON {table}",
        f"CREATE TRIGGER mica_append_only_truncate BEFORE TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION mica_record_append_only()",
    ]


def _sqlite_trigger_name(table, operation):
    return f"mica_append_only_{table}_{operation.lower()}"


def _sqlite_triggers(table):
    return [
        f"CREATE TRIGGER IF NOT EXISTS {_sqlite_trigger_name(table, operation)} "
        f"BEFORE {operation} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE % table} ({operation})'); END"
        for operation in OPERATIONS
    ]


def _execute(connection, statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def record_triggers_install(connection=default_connection):
    """Create the triggers (again): idempotent, run by the migration and after every
    migrate, since SQLite drops a table's triggers when a migration rebuilds it."""
    tables = set(connection.introspection.table_names())
    present = [table for table in RECORD_TABLES if table in tables]
    if connection.vendor == "postgresql":
        statements = [PG_FUNCTION] if present else []
        for table in present:
            statements += _pg_triggers(table)
    elif connection.vendor == "sqlite":
        statements = [s for table in present for s in _sqlite_triggers(table)]
    else:
        return
    _execute(connection, statements)


def record_triggers_remove(connection=default_connection):
    """Drop the triggers (the migration's reverse, and SQLite's maintenance)."""
    tables = set(connection.introspection.table_names())
    present = [table for table in RECORD_TABLES if table in tables]
    if connection.vendor == "postgresql":
        statements = [
            f"DROP TRIGGER IF EXISTS {name} ON {table}"
            for table in present
            for name in ("mica_append_only_rows", "mica_append_only_truncate")
        ]
    elif connection.vendor == "sqlite":
        statements = [
            f"DROP TRIGGER IF EXISTS {_sqlite_trigger_name(table, operation)}"
            for table in present
            for operation in OPERATIONS
        ]
    else:
        return
    _execute(connection, statements)


@contextmanager
def record_maintenance(connection=default_connection):
    """The record's tables may be emptied inside: for a flush of the whole database."""
    if connection.vendor == "postgresql":
        _execute(connection, ["SELECT set_config('mica.maintenance', 'on', false)"])
        try:
            yield
        finally:
            _execute(connection, ["SELECT set_config('mica.maintenance', '', false)"])
    elif connection.vendor == "sqlite":
        with transaction.atomic(using=connection.alias):
            record_triggers_remove(connection)
            yield
            record_triggers_install(connection)
    else:
        yield


def record_triggers_after_migrate(sender, using, **kwargs):
    """A post_migrate receiver: the triggers stand after every migrate and flush."""
    from django.db import connections

    record_triggers_install(connections[using])
