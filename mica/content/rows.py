"""Which rows a commit wrote, for the tables whose rows belong to one page each.

Table revisions (mica.content.revision) say that a table moved, not which of its rows.
For a few tables that is too coarse: a task edit moves the task tables, which every
task page reads, yet it changes one task's page. A floor above registers such a table
with the scope its rows belong to and how to name a row's key (the task's slug of a
version, say); every commit then records, beside the revisions it moves, the keys it
wrote in those tables (RowChange). A bake (mica.site.bake) takes a scoped page from the
previous bake when the scoped tables moved only for other keys.

A key is known only where the write says it: a model saved or deleted one at a time
sends a signal naming its instance, and a queryset update names its rows with
rows_named. A write nothing explains (an unnamed update, a bulk insert, a save outside a
transaction, whose statement commits before its signal) records no key: the whole table
moved, as before.
"""

from collections import Counter

from django.db import transaction
from django.db.models.signals import post_delete, post_save

# table -> (scope, key of an instance)
_scoped = {}


def row_scope_register(model, scope, key):
    """Rows of `model` belong to the page of `scope` named by key(instance)."""
    _scoped[model._meta.db_table.lower()] = (scope, key)
    for signal in (post_save, post_delete):
        signal.connect(_written, sender=model, dispatch_uid=f"rows-{model._meta.label}")


def scoped_tables(scope):
    return frozenset(table for table, (name, _key) in _scoped.items() if name == scope)


class RowsWritten:
    """The scoped rows one transaction wrote: statements seen, and the keys signals named."""

    def __init__(self):
        self.statements, self.explained, self.keys = Counter(), Counter(), {}

    def statement(self, table):
        if table in _scoped:
            self.statements[table] += 1

    def changes(self):
        """{table: keys, or None where some write named no key}."""
        return {
            table: self.keys.get(table) if self.explained[table] >= count else None
            for table, count in self.statements.items()
        }


def rows_named(model, instances):
    """Name the rows a queryset update of `model` just wrote (an update sends no signal):
    without this the commit would count every row of the table as moved, and a bake would
    render every page scoped to it for one row's change."""
    for instance in instances:
        _written(model, instance)


def _written(sender, instance, **kwargs):
    from mica.content.changes import committed_step

    table = sender._meta.db_table.lower()
    step = committed_step(transaction.get_connection())
    if step is None:  # committed already (autocommit): its rows went unnamed
        return
    _scope, key = _scoped[table]
    step.rows.explained[table] += 1
    step.rows.keys.setdefault(table, set()).add(key(instance))


def row_changes_since(number, until):
    """{table: keys moved, or None for every row} of the scoped tables, over the commits
    after content revision `number` up to `until`; a table absent moved in none of them."""
    from mica.content.models import RowChange

    moved = {}
    for table, key in RowChange.objects.filter(number__gt=number, number__lte=until).values_list(
        "table_name", "key"
    ):
        keys = moved.setdefault(table, set())
        if key == "" or keys is None:  # a commit that did not say which rows
            moved[table] = None
        else:
            keys.add(key)
    return moved


def row_changes_prune(number):
    """Forget the row changes up to content revision `number`: no build older than it is
    taken from any more."""
    from mica.content.models import RowChange

    RowChange.objects.filter(number__lte=number).delete()


def rows_moved_elsewhere(scope, keys, tables, moved_rows):
    """Of `tables` (moved since a build), those that did not move for any of `keys`: scoped
    tables whose commits all named their rows, none of them one of `keys`."""
    scoped = scoped_tables(scope)
    keys = frozenset(keys)
    return {
        table
        for table in tables
        if table in scoped
        and moved_rows.get(table) is not None
        and moved_rows[table].isdisjoint(keys)
    }
