"""Content changes, once their transaction commits, move the revisions of the tables
they wrote (which key the page cache) and send `content_committed` (the exports
listen to it).

Writes are seen as SQL on every database connection, not through model signals:
queryset updates, bulk inserts and many-to-many changes send no `post_save`, yet
they change what pages and exports show (publishing an edition, making a task
version current, confirming a challenge).
"""

import logging
import re
from contextlib import contextmanager
from functools import cache

from django.apps import apps
from django.db import connections, transaction
from django.db.backends.signals import connection_created
from django.dispatch import Signal

from mica.content.revision import revision_pending_mark, revisions_bump
from mica.content.rows import RowsWritten

logger = logging.getLogger(__name__)

# The apps whose records the pages and exports are made of.
WATCHED_APPS = {"methodology", "catalogue", "markets", "governance", "submissions"}
# Records that change often and never reach a page or an export.
IGNORED_MODELS = {
    "outboxmessage",
    "persondeclaration",
    "historicaltaskversion",
    # Staff's discussion of a review: no page or export shows it.
    "reviewcomment",
    "historicalreviewcomment",
}
WRITE_RE = re.compile(
    r'\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+[`"]?(\w+)', re.IGNORECASE
)


@cache
def watched_tables():
    tables = set()
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        # A many-to-many table belongs to the model that declares the field.
        owner = meta.auto_created._meta if meta.auto_created else meta
        if meta.app_label in WATCHED_APPS and owner.model_name not in IGNORED_MODELS:
            tables.add(meta.db_table.lower())
    return frozenset(tables)


# Set on a connection while its writes are declared not public (writes_not_public).
NOT_PUBLIC_ATTRIBUTE = "mica_writes_not_public"


@contextmanager
def writes_not_public(using=None):
    """The writes in this block change no public page and no export: they move nothing.

    For records only staff see until a later decision makes them public (a challenge
    before it is screened, a system submission before it is accepted): an anonymous
    filing must not make every reader pay an uncached render. The decision that makes
    such a record public is an ordinary write and moves the revision.
    """
    connection = transaction.get_connection(using)
    depth = getattr(connection, NOT_PUBLIC_ATTRIBUTE, 0)
    setattr(connection, NOT_PUBLIC_ATTRIBUTE, depth + 1)
    try:
        yield
    finally:
        setattr(connection, NOT_PUBLIC_ATTRIBUTE, depth)


# Sent once after each transaction that changed content has committed, with the
# tables it wrote.
content_committed = Signal()
# Sent when that after-commit step failed, with the exception: the write is committed and
# answered as it should be, so the failure goes to the log and to whoever records it for
# /healthz/system (mica.site).
content_committed_failed = Signal()


class _Committed:
    """The after-commit step of one transaction: it knows the tables the transaction wrote,
    and the scoped rows it wrote (mica.content.rows)."""

    def __init__(self, tables=()):
        self.tables = set(tables)
        self.rows = RowsWritten()
        for table in self.tables:
            self.rows.statement(table)

    def __call__(self):
        revisions_bump(self.tables, rows=self.rows.changes())
        content_committed.send(sender=None, tables=frozenset(self.tables))


def _step_run(step):
    """Run an after-commit step; a failure is logged and reported, never raised.

    The transaction has committed and its answer is owed to the client: a revision not
    moved costs freshness until the next commit, while an error here would turn an
    acknowledged write into a 500.
    """
    try:
        step()
    except Exception as error:
        logger.exception("content committed, but its after-commit step failed")
        try:
            content_committed_failed.send(sender=None, error=error, tables=frozenset(step.tables))
        except Exception:
            logger.exception("the failed after-commit step could not be recorded")


def _on_commit_hook(step):
    # A function, not the step itself: on_commit(robust=True) names what failed by its
    # __qualname__, which an instance lacks, so its guard would raise in turn.
    def content_committed_after_commit():
        _step_run(step)

    content_committed_after_commit.step = step
    return content_committed_after_commit


def step_of(hook):
    """The _Committed step an on_commit hook runs, or None for any other hook."""
    step = getattr(hook, "step", None)
    return step if isinstance(step, _Committed) else None


def committed_step(connection):
    """The after-commit step of the open transaction on `connection`, or None."""
    for entry in connection.run_on_commit:
        step = step_of(entry[1])
        if step is not None:
            return step
    return None


def revisions_bump_all():
    """Move every watched table's revision: the content was replaced wholesale (a restore)."""
    revisions_bump(watched_tables())


def content_written(connection, table):
    revision_pending_mark(connection)
    # One callback per transaction, however many rows and tables it writes.
    step = committed_step(connection)
    if step is not None:
        step.tables.add(table)
        step.rows.statement(table)
        return
    transaction.on_commit(_on_commit_hook(_Committed({table})), using=connection.alias, robust=True)


def _after_statement(cursor, table):
    """Run the after-commit step of an autocommit write once its statement is finished.

    An autocommit statement commits itself only when it is done, and on SQLite an
    INSERT … RETURNING stays in progress until its cursor is read and closed. A
    transaction opened before that (the revision bump) would fail to commit and,
    rolling back, take the acknowledged row with it. Closing the cursor ends the
    statement, so the bump runs after it, in a transaction of its own.
    """
    close = cursor.close

    def close_then_commit():
        try:
            close()
        finally:
            del cursor.close  # back to the wrapped cursor's own close
            _step_run(_Committed({table}))

    cursor.close = close_then_commit


def watch_writes(execute, sql, params, many, context):
    result = execute(sql, params, many, context)
    if getattr(context["connection"], NOT_PUBLIC_ATTRIBUTE, 0):
        return result
    match = WRITE_RE.match(sql)
    table = match.group(1).lower() if match else None
    if table in watched_tables():
        connection = context["connection"]
        if connection.in_atomic_block:
            content_written(connection, table)
        elif "close" not in vars(context["cursor"]):
            _after_statement(context["cursor"], table)
    return result


def _install(sender, connection, **kwargs):
    # First in the list: `connection.execute_wrapper()` blocks pop the last one on exit.
    if watch_writes not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, watch_writes)


def connect():
    connection_created.connect(_install, dispatch_uid="content-writes-watched")
    for connection in connections.all(initialized_only=True):  # opened while apps loaded
        _install(None, connection)
