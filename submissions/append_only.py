"""The record refuses change in the database itself, not only in the ORM.

Seed: "Scores are derived, not stored. The raw outcome, latency and evaluation cost
are the record." and "A figure that cannot be walked back along this chain is not
published." The models refuse to save a row twice or delete one
(submissions.models.AppendOnlyRecord); these triggers refuse the same to any SQL,
raw or not, on the tables of the record: attempts, their model invocations and
evidence, invalidations and their reversals. Four guards, on both databases:

- UPDATE and DELETE (and TRUNCATE on PostgreSQL) of a record row are refused.
- An insert that meets a row already there is refused (SQLite): `INSERT OR REPLACE`
  resolves the conflict by deleting the old row, which fires no delete trigger.
- Model invocations and evidence are added only with their attempt, in the
  transaction that inserted it: later, they would change what an attempt recorded.
  PostgreSQL: the attempt row's xmin (its inserting transaction or subtransaction) is
  still in progress, so it is this transaction's (a row of another transaction in
  progress is not visible). SQLite: each connection numbers its transactions (a
  statement that starts outside a transaction starts the next one) and remembers the
  attempts the current one inserted; the functions that do so are registered on every
  connection Django opens, so a connection without them (the sqlite3 shell) cannot
  add attempts nor their parts at all.
- A snapshot's `routable_models` and `data_status`, which scoring reads, are frozen
  once an attempt names it (mica.frozen_rows), and on SQLite such a snapshot is never
  replaced. These guards read the attempts' table, so they stand aside while migrations
  run (SQLite refuses to rebuild a table another table's trigger names) and stand again
  after every migrate.

No session setting lifts them, and the PostgreSQL functions name their tables by
schema, so no search_path or temporary table stands in for the record. The one way
round is a migration (or an operator with a role that owns the tables) dropping and
remaking them: `record_maintenance()` does so, in one transaction, for the flush that
empties the whole database (tests between transactional cases, `manage.py flush`,
submissions/management/commands/flush.py); no other write meets the gap. A restore
replaces the database whole: SQLite's backup API copies pages and pg_restore --clean
drops the tables, and neither fires a row trigger; the restored database carries its
triggers.
"""

import sqlite3
from contextlib import contextmanager

from django.db import connection as default_connection
from django.db import connections, transaction
from django.db.backends.signals import connection_created
from django.db.models.signals import pre_migrate

from mica.frozen_rows import FrozenRows, frozen_triggers_install, frozen_triggers_remove

RECORD_TABLES = (
    "submissions_attempt",
    "submissions_modelinvocation",
    "submissions_evidencerecord",
    "submissions_attemptinvalidation",
    "submissions_invalidationreversal",
)
PARTS = ("submissions_modelinvocation", "submissions_evidencerecord")
OPERATIONS = ("UPDATE", "DELETE")
MESSAGE = "MICA: %s is append-only: the record is never changed or deleted"
PART_REFUSED = "is added only with its attempt"  # what the ORM recognises (models.AttemptPart)
WITH_ATTEMPT = f"MICA: %s {PART_REFUSED}, in the transaction that records it"
REPLACE = "MICA: %s is append-only: a row already there is never replaced"


def _snapshot(schema=""):
    """The snapshot's guard; on PostgreSQL the attempts' table is named with its schema."""
    return FrozenRows(
        table="submissions_systemsnapshot",
        frozen=f"EXISTS (SELECT 1 FROM {schema}submissions_attempt a "
        "WHERE a.snapshot_id = {row}.id)",
        what="a snapshot an attempt names (its routable models and data status)",
        columns=("routable_models", "data_status"),
    )


PG_FUNCTION = """
CREATE OR REPLACE FUNCTION mica_record_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'MICA: % is append-only: the record is never changed or deleted (%)',
        TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql
"""

# xmin is the 32-bit id of the (sub)transaction that inserted the attempt; widened
# against this transaction's 64-bit id, an id below it is an earlier transaction's, and
# one at or above it is this transaction's only while it is still in progress.
PG_OPEN = """
CREATE OR REPLACE FUNCTION {schema}.mica_record_open(attempt bigint) RETURNS boolean AS $$
DECLARE
    made bigint;
    top bigint := txid_current();
    distance bigint;
BEGIN
    SELECT xmin::text::bigint INTO made FROM {schema}.submissions_attempt WHERE id = attempt;
    IF made IS NULL THEN
        RETURN false;
    END IF;
    distance := (made - top % 4294967296 + 6442450944) % 4294967296 - 2147483648;
    RETURN distance >= 0 AND txid_status(top + distance) = 'in progress';
END;
$$ LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
"""

PG_PART = """
CREATE OR REPLACE FUNCTION {schema}.mica_record_part() RETURNS trigger AS $$
BEGIN
    IF NOT {schema}.mica_record_open(NEW.attempt_id) THEN
        RAISE EXCEPTION 'MICA: % is added only with its attempt, in the transaction that '
            'records it', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
"""


def _present(connection):
    tables = set(connection.introspection.table_names())
    return [table for table in RECORD_TABLES if table in tables]


def _execute(connection, statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


# --- PostgreSQL -------------------------------------------------------------------------


def _pg_schema(connection):
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        return connection.ops.quote_name(cursor.fetchone()[0])


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


def _pg_part_triggers(schema, table):
    return [
        f"DROP TRIGGER IF EXISTS mica_record_with_attempt ON {table}",
        f"CREATE TRIGGER mica_record_with_attempt BEFORE INSERT ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.mica_record_part()",
    ]


def _pg_install(connection, present):
    if not present:
        return []
    schema = _pg_schema(connection)
    statements = [PG_FUNCTION, PG_OPEN.format(schema=schema), PG_PART.format(schema=schema)]
    for table in present:
        statements += _pg_triggers(table)
        if table in PARTS:
            statements += _pg_part_triggers(schema, table)
    return statements


def _pg_remove(present):
    names = ("mica_append_only_rows", "mica_append_only_truncate", "mica_record_with_attempt")
    return [f"DROP TRIGGER IF EXISTS {name} ON {table}" for table in present for name in names]


# --- SQLite -----------------------------------------------------------------------------


def _sqlite_trigger_name(table, operation):
    return f"mica_append_only_{table}_{operation.lower()}"


def _sqlite_names(table):
    names = [_sqlite_trigger_name(table, operation) for operation in OPERATIONS]
    names.append(f"mica_record_{table}_replace")
    if table == "submissions_attempt":
        names.append("mica_record_attempt_opened")
    if table in PARTS:
        names.append(f"mica_record_{table}_with_attempt")
    return names


def _sqlite_keys(connection, table):
    """Every key an insert could meet: the primary key and each unique constraint."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [c["columns"] for c in constraints.values() if c["unique"] or c["primary_key"]]


def _sqlite_replace(connection, table):
    meets = " OR ".join(
        f"EXISTS (SELECT 1 FROM {table} WHERE "
        + " AND ".join(f'"{column}" = NEW."{column}"' for column in columns)
        + ")"
        for columns in _sqlite_keys(connection, table)
    )
    return (
        f"CREATE TRIGGER IF NOT EXISTS mica_record_{table}_replace BEFORE INSERT ON {table} "
        f"WHEN {meets} BEGIN SELECT RAISE(ABORT, '{REPLACE % table}'); END"
    )


def _sqlite_triggers(connection, table):
    statements = [
        f"CREATE TRIGGER IF NOT EXISTS {_sqlite_trigger_name(table, operation)} "
        f"BEFORE {operation} ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{MESSAGE % table} ({operation})'); END"
        for operation in OPERATIONS
    ]
    statements.append(_sqlite_replace(connection, table))
    if table == "submissions_attempt":
        statements.append(
            "CREATE TRIGGER IF NOT EXISTS mica_record_attempt_opened AFTER INSERT ON "
            f"{table} BEGIN SELECT mica_record_opened(NEW.id); END"
        )
    if table in PARTS:
        statements.append(
            f"CREATE TRIGGER IF NOT EXISTS mica_record_{table}_with_attempt BEFORE INSERT "
            f"ON {table} WHEN NOT mica_record_open(NEW.attempt_id) "
            f"BEGIN SELECT RAISE(ABORT, '{WITH_ATTEMPT % table}'); END"
        )
    return statements


class _Transactions:
    """One SQLite connection's transactions, numbered, and the attempts the current one
    inserted: what `mica_record_open` reads, as PostgreSQL reads an attempt's xmin."""

    def __init__(self, raw):
        self.raw = raw
        self.number = 0
        self.attempts = set()

    def statement(self, sql):
        # Called as each statement (or trigger program) starts: outside a transaction it
        # starts one, explicit (BEGIN, SAVEPOINT) or its own.
        if not self.raw.in_transaction:
            self.number += 1
            self.attempts.clear()

    def opened(self, attempt):
        self.attempts.add(attempt)

    def open(self, attempt):
        return self.raw.in_transaction and attempt in self.attempts


def record_functions_register(sender=None, connection=None, **kwargs):
    """A connection_created receiver: the SQLite functions the record's triggers call."""
    raw = connection.connection
    # Told by the driver's connection, not the vendor: this runs as any test opens one.
    if not isinstance(raw, sqlite3.Connection):  # None: connection_created comes later
        return
    transactions = _Transactions(raw)
    raw.set_trace_callback(transactions.statement)
    raw.create_function("mica_record_opened", 1, transactions.opened)
    raw.create_function("mica_record_open", 1, transactions.open)


# Registered on import (the app's ready() imports this module), and on any connection
# opened while apps were loading, so every connection Django opens can write the record.
connection_created.connect(record_functions_register, dispatch_uid="record-functions")
for _opened in connections.all(initialized_only=True):
    record_functions_register(connection=_opened)


# --- Both -------------------------------------------------------------------------------


def record_triggers_install(connection=default_connection):
    """Create the record tables' triggers (again): idempotent, run by the migrations and
    after every migrate, since SQLite drops a table's triggers when a migration rebuilds
    it."""
    present = _present(connection)
    if connection.vendor == "postgresql":
        statements = _pg_install(connection, present)
    elif connection.vendor == "sqlite":
        statements = [s for table in present for s in _sqlite_triggers(connection, table)]
    else:
        return
    _execute(connection, statements)


def record_triggers_remove(connection=default_connection):
    """Drop every trigger here (the migration's reverse, and the flush's maintenance)."""
    present = _present(connection)
    if connection.vendor == "postgresql":
        statements = _pg_remove(present)
    elif connection.vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {n}" for t in present for n in _sqlite_names(t)]
    else:
        return
    _execute(connection, statements)
    snapshot_triggers_remove(connection)


# SQLite: INSERT OR REPLACE over a named snapshot would delete it without firing its
# update or delete trigger (the attempts' deferred foreign key is no guard: a session
# turns foreign keys off).
SNAPSHOT_REPLACE = "mica_record_submissions_systemsnapshot_replace"
SQLITE_SNAPSHOT_REPLACE = f"""
CREATE TRIGGER IF NOT EXISTS {SNAPSHOT_REPLACE} BEFORE INSERT ON submissions_systemsnapshot
WHEN EXISTS (SELECT 1 FROM submissions_systemsnapshot s
    WHERE (s.id = NEW.id OR (s.system_id = NEW.system_id AND s.version = NEW.version))
    AND EXISTS (SELECT 1 FROM submissions_attempt a WHERE a.snapshot_id = s.id))
BEGIN SELECT RAISE(ABORT, 'MICA: a snapshot an attempt names is frozen: never replaced'); END
"""


def snapshot_triggers_install(connection=default_connection):
    """The snapshot's guards read the attempts' table, so they are made only after a whole
    migrate: SQLite refuses to rebuild a table that another table's trigger names."""
    schema = f"{_pg_schema(connection)}." if connection.vendor == "postgresql" else ""
    frozen_triggers_install(connection, [_snapshot(schema)])
    if connection.vendor == "sqlite":
        _execute(connection, [SQLITE_SNAPSHOT_REPLACE])


def snapshot_triggers_remove(connection=default_connection):
    frozen_triggers_remove(connection, [_snapshot()])
    if connection.vendor == "sqlite":
        _execute(connection, [f"DROP TRIGGER IF EXISTS {SNAPSHOT_REPLACE}"])


@contextmanager
def record_maintenance(connection=default_connection):
    """The record's tables may be emptied inside: for a flush of the whole database (on
    PostgreSQL it truncates, which a trigger refuses). One transaction, so no other
    write meets the gap, and the triggers stand again when it commits."""
    with transaction.atomic(using=connection.alias):
        record_triggers_remove(connection)
        yield
        record_triggers_install(connection)
        snapshot_triggers_install(connection)


def record_triggers_after_migrate(sender, using, **kwargs):
    """A post_migrate receiver: the triggers stand after every migrate and flush."""
    record_triggers_install(connections[using])
    snapshot_triggers_install(connections[using])


def snapshot_triggers_before_migrate(sender, using, **kwargs):
    """A pre_migrate receiver: the snapshot's guard stands aside while migrations may
    rebuild the attempts' table (post_migrate makes it again)."""
    if sender.name == "submissions":
        snapshot_triggers_remove(connections[using])


# Connected on import, as the app's ready() imports this module.
pre_migrate.connect(snapshot_triggers_before_migrate, dispatch_uid="snapshot-triggers")
