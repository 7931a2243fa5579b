"""The content revision: a number that moves whenever committed content changes.

Pages are cached under it (mica.content.page_cache), so a change is visible at once.
mica.content.changes watches the writes and moves it after each commit.
"""

import datetime

from django.db import DatabaseError, IntegrityError, connections, transaction
from django.db.models import F
from django.utils import timezone

from mica.content.models import ContentRevision

REVISION_ID = 1
# Before the first revision row exists (a flushed database, say).
NO_REVISION = (0, datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC))
# Set on a connection whose open transaction wrote content that the revision
# does not count yet: the outermost atomic block of that transaction.
PENDING_ATTRIBUTE = "mica_content_pending"
REVISION_SQL = f"SELECT number, changed_at FROM {ContentRevision._meta.db_table} WHERE id = %s"


def content_revision():
    """(number, changed_at) of the committed content, in one query.

    Every cached page pays for this read, so it is plain SQL: compiling the
    queryset would cost more than running it.
    """
    connection = connections[ContentRevision.objects.db]
    with connection.cursor() as cursor:
        cursor.execute(REVISION_SQL, [REVISION_ID])
        row = cursor.fetchone()
    if row is None:
        return NO_REVISION
    number, changed_at = row
    if isinstance(changed_at, str):  # SQLite keeps UTC as text
        changed_at = datetime.datetime.fromisoformat(changed_at).replace(tzinfo=datetime.UTC)
    return number, changed_at


def revision_bump():
    """Move the revision; called once a transaction that changed content has committed."""
    connection = transaction.get_connection()
    setattr(connection, PENDING_ATTRIBUTE, None)
    now = timezone.now()
    revisions = ContentRevision.objects.filter(pk=REVISION_ID)
    try:
        with transaction.atomic():
            if not revisions.update(number=F("number") + 1, changed_at=now):
                ContentRevision.objects.create(pk=REVISION_ID, number=1, changed_at=now)
    except IntegrityError:  # another process created the row first
        revisions.update(number=F("number") + 1, changed_at=now)
    except DatabaseError:
        # Content written by a migration before this table exists: nothing has
        # been served from the cache yet, so there is nothing to move.
        if ContentRevision._meta.db_table in connection.introspection.table_names():
            raise


def revision_pending_mark(connection):
    """The open transaction on this connection wrote content the revision does not count yet."""
    if connection.in_atomic_block:
        setattr(connection, PENDING_ATTRIBUTE, connection.atomic_blocks[0])


def revision_pending():
    """Whether this connection's open transaction holds content changes the revision misses.

    Such a transaction sees content that no other reader sees under the same
    revision, so its pages must neither come from the cache nor go into it. Rolled
    back transactions end their atomic block, so a stale mark never matches.
    """
    connection = transaction.get_connection()
    marked = getattr(connection, PENDING_ATTRIBUTE, None)
    return (
        marked is not None and connection.in_atomic_block and connection.atomic_blocks[0] is marked
    )
