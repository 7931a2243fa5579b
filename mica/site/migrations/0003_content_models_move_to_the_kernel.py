"""The content revision and the loaded-record digests now belong to mica.content
(the ground floor); their tables stay, so this changes the migration state only."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [("site", "0002_loaded_record"), ("content", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ContentRevision"),
                migrations.DeleteModel(name="LoadedRecord"),
            ],
        ),
    ]
