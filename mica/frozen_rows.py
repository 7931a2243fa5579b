"""Rows the database itself keeps as they were once frozen, whoever writes.

Seed 000: "The method is versioned by edition" and a task version is what its local
reviews approved. Once a task version is validated, or a published edition holds it,
its text is its number's for good; a published edition's thresholds likewise. The
models refuse such a change (catalogue.models, mica.methodology.models); these triggers
refuse it to any SQL, raw or not, on both databases.

A guard names a table, the SQL condition that makes one of its rows frozen (on a row
alias `{row}`), the columns that then never change (every column when None), its child
tables, whose rows of a frozen parent can be neither added, changed nor removed, and
whether a row born frozen (its condition reads another table) can be added.

No session setting lifts them. The one way round is a migration (or an operator with a
role that owns the tables) dropping and remaking them, as `frozen_rows_maintenance`
does for the flush that empties a whole SQLite database; PostgreSQL's flush truncates,
which fires no row trigger.
"""

from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections, transaction

_guards = []


@dataclass(frozen=True)
class FrozenRows:
    table: str
    frozen: str
    what: str
    columns: tuple = None
    children: tuple = ()
    # Whether a row can be added frozen: a condition on another table (a market edition
    # of a published edition) holds before the row exists, so an insert is refused too.
    inserts: bool = False

    def condition(self, row):
        return self.frozen.format(row=row)


def frozen_rows_register(guard):
    if all(g.table != guard.table for g in _guards):
        _guards.append(guard)


def _columns(connection, guard):
    if guard.columns is not None:
        return guard.columns
    with connection.cursor() as cursor:
        description = connection.introspection.get_table_description(cursor, guard.table)
    return tuple(column.name for column in description)


def _message(guard):
    return f"MICA: {guard.what} is frozen: a change is a new version or a new edition"


def _changed(connection, guard, distinct):
    columns = _columns(connection, guard)
    return " OR ".join(f'NEW."{c}" {distinct} OLD."{c}"' for c in columns)


# --- PostgreSQL -------------------------------------------------------------------------


def _pg_statements(connection, guard):
    name = f"mica_frozen_{guard.table}"
    message = _message(guard).replace("'", "''")
    changed = _changed(connection, guard, "IS DISTINCT FROM")
    born = f"(TG_OP = 'INSERT' AND {guard.condition('NEW')})" if guard.inserts else "FALSE"
    operations = "INSERT OR UPDATE OR DELETE" if guard.inserts else "UPDATE OR DELETE"
    statements = [
        f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    IF {born} THEN
        RAISE EXCEPTION '{message} (%)', TG_OP USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP <> 'INSERT' AND {guard.condition("OLD")} AND (TG_OP = 'DELETE' OR {changed}) THEN
        RAISE EXCEPTION '{message} (%)', TG_OP USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql""",
        f"DROP TRIGGER IF EXISTS {name} ON {guard.table}",
        f"CREATE TRIGGER {name} BEFORE {operations} ON {guard.table} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}()",
    ]
    for child, key in guard.children:
        statements += _pg_child_statements(guard, child, key, message)
    return statements


def _pg_child_statements(guard, child, key, message):
    name = f"mica_frozen_{child}"
    frozen_parent = (
        f"EXISTS (SELECT 1 FROM {guard.table} parent WHERE parent.id = %s "
        f"AND {guard.condition('parent')})"
    )
    return [
        f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger AS $$
BEGIN
    IF (TG_OP <> 'INSERT' AND {frozen_parent % f"OLD.{key}"})
        OR (TG_OP <> 'DELETE' AND {frozen_parent % f"NEW.{key}"}) THEN
        RAISE EXCEPTION '{message} (% on {child})', TG_OP
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql""",
        f"DROP TRIGGER IF EXISTS {name} ON {child}",
        f"CREATE TRIGGER {name} BEFORE INSERT OR UPDATE OR DELETE ON {child} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}()",
    ]


def _pg_drop(guard):
    tables = [guard.table, *(child for child, _key in guard.children)]
    return [f"DROP TRIGGER IF EXISTS mica_frozen_{table} ON {table}" for table in tables]


# --- SQLite -----------------------------------------------------------------------------


def _sqlite_names(guard):
    names = [f"mica_frozen_{guard.table}_{op}" for op in ("update", "delete", "insert")]
    for child, _key in guard.children:
        names += [f"mica_frozen_{child}_{op}" for op in ("insert", "update", "delete")]
    return names


def _sqlite_statements(connection, guard):
    message = _message(guard).replace("'", "''")
    raise_it = f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
    changed = _changed(connection, guard, "IS NOT")
    update, delete, insert = _sqlite_names(guard)[:3]
    statements = [
        f"CREATE TRIGGER IF NOT EXISTS {update} BEFORE UPDATE ON {guard.table} "
        f"WHEN {guard.condition('OLD')} AND ({changed}) {raise_it}",
        f"CREATE TRIGGER IF NOT EXISTS {delete} BEFORE DELETE ON {guard.table} "
        f"WHEN {guard.condition('OLD')} {raise_it}",
    ]
    if guard.inserts:
        statements.append(
            f"CREATE TRIGGER IF NOT EXISTS {insert} BEFORE INSERT ON {guard.table} "
            f"WHEN {guard.condition('NEW')} {raise_it}"
        )
    for child, key in guard.children:

        def frozen_parent(row, key=key):
            return (
                f"EXISTS (SELECT 1 FROM {guard.table} parent WHERE parent.id = {row}.{key} "
                f"AND {guard.condition('parent')})"
            )

        when = {
            "insert": frozen_parent("NEW"),
            "update": f"{frozen_parent('OLD')} OR {frozen_parent('NEW')}",
            "delete": frozen_parent("OLD"),
        }
        statements += [
            f"CREATE TRIGGER IF NOT EXISTS mica_frozen_{child}_{op} BEFORE {op.upper()} "
            f"ON {child} WHEN {condition} {raise_it}"
            for op, condition in when.items()
        ]
    return statements


# --- Both -------------------------------------------------------------------------------


def _present(connection, guards):
    tables = set(connection.introspection.table_names())
    return [g for g in guards if g.table in tables and all(c in tables for c, _k in g.children)]


def _execute(connection, statements):
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def frozen_triggers_install(connection, guards=None):
    """Create the triggers (again): idempotent, run after every migrate, since SQLite
    drops a table's triggers when a migration rebuilds it and a new column must be
    covered too."""
    guards = _present(connection, _guards if guards is None else guards)
    if connection.vendor == "postgresql":
        statements = [s for g in guards for s in _pg_statements(connection, g)]
    elif connection.vendor == "sqlite":
        frozen_triggers_remove(connection, guards)
        statements = [s for g in guards for s in _sqlite_statements(connection, g)]
    else:
        return
    _execute(connection, statements)


def frozen_triggers_remove(connection, guards=None):
    guards = _present(connection, _guards if guards is None else guards)
    if connection.vendor == "postgresql":
        statements = [s for g in guards for s in _pg_drop(g)]
    elif connection.vendor == "sqlite":
        statements = [f"DROP TRIGGER IF EXISTS {n}" for g in guards for n in _sqlite_names(g)]
    else:
        return
    _execute(connection, statements)


@contextmanager
def frozen_rows_maintenance(connection):
    """Frozen rows may be deleted inside: for the flush that empties a whole SQLite
    database (one transaction, so no other write meets the gap). PostgreSQL's flush
    truncates, which no row trigger sees, so there nothing is lifted."""
    if connection.vendor != "sqlite":
        yield
        return
    with transaction.atomic(using=connection.alias):
        frozen_triggers_remove(connection)
        yield
        frozen_triggers_install(connection)


def frozen_triggers_after_migrate(sender, using, **kwargs):
    """A post_migrate receiver: the triggers stand after every migrate and flush."""
    frozen_triggers_install(connections[using])
