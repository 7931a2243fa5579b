"""What a piece of work read: the content tables named by the queries run inside it.

The page cache keys a page, and the fragment cache a fragment, by the revisions of the
tables it read. Work whose result comes from a cache runs no query, so it declares the
tables that result was made of (tables_read_declare): every recording around it, the
fragment's enclosing fragment and the page, counts them as read.
"""

import itertools
import re
from contextlib import contextmanager
from contextvars import ContextVar

from django.core.signals import setting_changed
from django.db import connection

from mica.content.changes import watched_tables

READ_RE = re.compile(r'\b(?:FROM|JOIN)\s+[`"]?(\w+)', re.IGNORECASE)
# The recordings open in this thread, outermost first.
_recording = ContextVar("tables_recording", default=())


class TablesRead:
    """The watched tables the queries run inside a recording read (or were declared)."""

    def __init__(self):
        self.tables = set()

    def __call__(self, execute, sql, params, many, context):
        self.tables.update(table.lower() for table in READ_RE.findall(sql))
        return execute(sql, params, many, context)

    def watched(self):
        return frozenset(self.tables & watched_tables())


@contextmanager
def tables_recorded():
    """Record the tables read inside the block; yields the TablesRead."""
    recorder = TablesRead()
    token = _recording.set((*_recording.get(), recorder))
    try:
        with connection.execute_wrapper(recorder):
            yield recorder
    finally:
        _recording.reset(token)


@contextmanager
def reads_unrecorded():
    """Run the block outside every recording open here: for work whose result does not
    depend on the rows it happens to read (the API schema reads models, and is made once
    a process, so only the first page to need it would count those reads)."""
    token = _recording.set(())
    wrappers = connection.execute_wrappers
    connection.execute_wrappers = [w for w in wrappers if not isinstance(w, TablesRead)]
    try:
        yield
    finally:
        connection.execute_wrappers = wrappers
        _recording.reset(token)


def tables_read_declare(tables):
    """Count `tables` as read by every recording open here."""
    for recorder in _recording.get():
        recorder.tables.update(tables)


# Settings change only under tests (override_settings); what was read under other
# settings must not be served after them, so every cache key carries this number.
_settings_generations = itertools.count()
_settings_generation = next(_settings_generations)


def _settings_changed(**kwargs):
    global _settings_generation
    _settings_generation = next(_settings_generations)


setting_changed.connect(_settings_changed, dispatch_uid="content-settings-changed")


def settings_generation():
    return _settings_generation
