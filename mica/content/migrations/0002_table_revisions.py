"""One revision a table instead of one for all content: a change invalidates only
the cached pages that read the table it wrote."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("content", "0001_initial")]

    operations = [
        migrations.CreateModel(
            name="TableRevision",
            fields=[
                ("table_name", models.CharField(max_length=63, primary_key=True, serialize=False, verbose_name="table")),
                ("number", models.PositiveBigIntegerField(default=0, verbose_name="number")),
                ("changed_at", models.DateTimeField(verbose_name="changed at")),
            ],
            options={"verbose_name": "table revision", "verbose_name_plural": "table revisions"},
        ),
        migrations.DeleteModel(name="ContentRevision"),
    ]
