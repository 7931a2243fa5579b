"""The record is closed to every writer (issue 44): no INSERT OR REPLACE rewrites a row on
SQLite, model invocations and evidence are added only with their attempt, a snapshot's
scored fields are frozen once an attempt names it, and no session setting lifts a trigger
on PostgreSQL (submissions.append_only)."""

from django.db import migrations

from submissions.append_only import record_triggers_install, record_triggers_remove


def triggers_install(apps, schema_editor):
    # Removed first: the PostgreSQL function that read `mica.maintenance` is replaced, and
    # SQLite's CREATE TRIGGER IF NOT EXISTS would keep an older trigger of the same name.
    record_triggers_remove(schema_editor.connection)
    record_triggers_install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0017_invalidations_are_a_history"),
    ]

    operations = [
        migrations.RunPython(triggers_install, migrations.RunPython.noop),
    ]
