"""Content changes, once their transaction commits, move the content revision (which
keys the page cache) and send `content_committed` (the exports listen to it).

Writes are seen as SQL on every database connection, not through model signals:
queryset updates, bulk inserts and many-to-many changes send no `post_save`, yet
they change what pages and exports show (publishing an edition, making a task
version current, confirming a challenge).
"""

import re
from functools import cache

from django.apps import apps
from django.db import connections, transaction
from django.db.backends.signals import connection_created
from django.dispatch import Signal

from mica.site.revision import revision_bump, revision_pending_mark

# The apps whose records the pages and exports are made of.
WATCHED_APPS = {"methodology", "catalogue", "markets", "governance", "submissions"}
# Records that change often and never reach a page or an export.
IGNORED_MODELS = {"outboxmessage", "persondeclaration", "historicaltaskversion"}
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


# Sent once after each transaction that changed content has committed.
content_committed = Signal()


def _after_commit():
    revision_bump()
    content_committed.send(sender=None)


def content_written(connection):
    revision_pending_mark(connection)
    # One callback per transaction, however many rows it writes.
    if any(entry[1] is _after_commit for entry in connection.run_on_commit):
        return
    transaction.on_commit(_after_commit, using=connection.alias, robust=True)


def watch_writes(execute, sql, params, many, context):
    result = execute(sql, params, many, context)
    match = WRITE_RE.match(sql)
    if match and match.group(1).lower() in watched_tables():
        content_written(context["connection"])
    return result


def _install(sender, connection, **kwargs):
    # First in the list: `connection.execute_wrapper()` blocks pop the last one on exit.
    if watch_writes not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, watch_writes)


def connect():
    connection_created.connect(_install, dispatch_uid="content-writes-watched")
    for connection in connections.all(initialized_only=True):  # opened while apps loaded
        _install(None, connection)
