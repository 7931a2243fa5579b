"""The content revision and the loaded-record digests move here from the site app.

State only: their tables, made by the site app's migrations, stay as they are.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [("site", "0002_loaded_record")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ContentRevision",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("number", models.PositiveBigIntegerField(default=0, verbose_name="number")),
                        ("changed_at", models.DateTimeField(verbose_name="changed at")),
                    ],
                    options={
                        "db_table": "site_contentrevision",
                        "verbose_name": "content revision",
                        "verbose_name_plural": "content revisions",
                    },
                ),
                migrations.CreateModel(
                    name="LoadedRecord",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=255, unique=True, verbose_name="record")),
                        ("digest", models.CharField(max_length=64, verbose_name="digest of the loaded fields")),
                        ("loaded_at", models.DateTimeField(verbose_name="loaded at")),
                    ],
                    options={
                        "db_table": "site_loadedrecord",
                        "verbose_name": "loaded canonical record",
                        "verbose_name_plural": "loaded canonical records",
                    },
                ),
            ],
        ),
    ]
