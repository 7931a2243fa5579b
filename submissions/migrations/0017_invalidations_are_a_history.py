"""An attempt may be invalidated again after a reversal: its invalidations are a history,
one row per decision, no longer one per attempt (issue 44)."""

import django.db.models.deletion
from django.db import migrations, models

from submissions.append_only import record_triggers_install


def triggers_install(apps, schema_editor):
    """SQLite rebuilds the altered table and drops its triggers with the old one: the record
    refuses UPDATE and DELETE again before the migration ends."""
    record_triggers_install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0016_data_status_measured"),
    ]

    operations = [
        migrations.AlterField(
            model_name="attemptinvalidation",
            name="attempt",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="invalidations",
                to="submissions.attempt",
                verbose_name="attempt",
            ),
        ),
        migrations.RunPython(triggers_install, triggers_install),
    ]
