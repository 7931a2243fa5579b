"""Table revisions: one number a table, moved whenever a commit changed its content.

Pages are cached under the revisions of the tables they read
(mica.content.page_cache), so a change is visible at once on the pages that show
it and leaves every other cached page alone. mica.content.changes watches the
writes and moves the revisions of the tables written after each commit.

Every move also moves one more row, GLOBAL, the revision of the content as a whole: a
reader in front of Django (the baked pages, mica.site.baked), on any node, learns that
something moved from one read of that row and reads every revision again only then.
Builds (mica.content.builds) are ordered by it.
"""

import datetime
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DatabaseError, connections, transaction
from django.db.models import F
from django.utils import timezone

from mica.content.models import RowChange, TableRevision

# A table no commit has written since the revisions began (a flushed database, say).
NO_REVISION = (0, datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
# Set on a connection whose open transaction wrote content that the revisions do
# not count yet: the outermost atomic block of that transaction.
PENDING_ATTRIBUTE = "mica_content_pending"
REVISIONS_SQL = f"SELECT table_name, number, changed_at FROM {TableRevision._meta.db_table}"
# The row that moves with every commit that moves any table's.
GLOBAL = "*"
GLOBAL_SQL = f"SELECT number FROM {TableRevision._meta.db_table} WHERE table_name = %s"


def _moment(changed_at):
    # SQLite keeps UTC as text, and a raw cursor hands it back as text or naive.
    if isinstance(changed_at, str):
        changed_at = datetime.datetime.fromisoformat(changed_at)
    return changed_at if changed_at.tzinfo else changed_at.replace(tzinfo=datetime.UTC)


# The revisions a page read before it began to render, for the work inside it.
_held = ContextVar("revisions_held", default=None)


@contextmanager
def revisions_held(revisions):
    """Inside the block, revisions_read() answers `revisions` without a query.

    A page reads the revisions once, before it renders; its fragments are then keyed
    by those same revisions rather than reading them again, each one a query.
    """
    token = _held.set(revisions)
    try:
        yield
    finally:
        _held.reset(token)


def revisions_read():
    """{table: (number, changed_at)} of the committed content, in one query.

    Every cached page pays for this read, so it is plain SQL: compiling the
    queryset would cost more than running it. The table holds a row a watched
    table at most, a few dozen.
    """
    held = _held.get()
    if held is not None:
        return held
    connection = connections[TableRevision.objects.db]
    with connection.cursor() as cursor:
        cursor.execute(REVISIONS_SQL)
        rows = cursor.fetchall()
    return {table: (number, _moment(changed_at)) for table, number, changed_at in rows}


def revision_lines(tables, revisions):
    """ "table number changed-at" for each of `tables` in order, as cache keys name them.

    The time too: a rolled-back transaction can hand the same number out twice.
    """
    lines = []
    for table in sorted(tables):
        number, changed_at = revisions.get(table, NO_REVISION)
        lines.append(f"{table} {number} {changed_at.isoformat()}")
    return lines


def revisions_bump(tables, rows=None):
    """Move the revisions of these tables; called once a transaction that wrote them committed.

    `rows`: {scoped table: keys written, or None} (mica.content.rows), recorded under the
    content's new global revision."""
    connection = transaction.get_connection()
    setattr(connection, PENDING_ATTRIBUTE, None)
    if not tables:
        return
    tables = {*tables, GLOBAL}
    now = timezone.now()
    try:
        with transaction.atomic():
            TableRevision.objects.bulk_create(
                [TableRevision(table_name=table, changed_at=now) for table in tables],
                ignore_conflicts=True,  # another process made the row first
            )
            TableRevision.objects.filter(table_name__in=tables).update(
                number=F("number") + 1, changed_at=now
            )
            if rows:
                _rows_record(rows)
    except DatabaseError:
        # Content written by a migration before this table exists: nothing has
        # been served from the cache yet, so there is nothing to move.
        if TableRevision._meta.db_table in connection.introspection.table_names():
            raise
        return


def _rows_record(rows):
    number = TableRevision.objects.get(table_name=GLOBAL).number
    RowChange.objects.bulk_create(
        RowChange(number=number, table_name=table, key=key)
        for table, keys in rows.items()
        for key in (sorted(keys) if keys is not None else [""])
    )


def revision_global():
    """The revision of the content as a whole: one indexed read of one row, cheap enough
    for every request a baked page answers."""
    connection = connections[TableRevision.objects.db]
    with connection.cursor() as cursor:
        cursor.execute(GLOBAL_SQL, [GLOBAL])
        row = cursor.fetchone()
    return row[0] if row else NO_REVISION[0]


def revision_pending_mark(connection):
    """The open transaction on this connection wrote content the revisions do not count yet."""
    if connection.in_atomic_block:
        setattr(connection, PENDING_ATTRIBUTE, connection.atomic_blocks[0])


def revision_pending():
    """Whether this connection's open transaction holds content changes the revisions miss.

    Such a transaction sees content that no other reader sees under the same
    revisions, so its pages must neither come from the cache nor go into it. Rolled
    back transactions end their atomic block, so a stale mark never matches.
    """
    connection = transaction.get_connection()
    marked = getattr(connection, PENDING_ATTRIBUTE, None)
    return (
        marked is not None and connection.in_atomic_block and connection.atomic_blocks[0] is marked
    )
