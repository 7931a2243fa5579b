from django.db import migrations, models
from django.utils import timezone


def create_revision(apps, schema_editor):
    ContentRevision = apps.get_model("site", "ContentRevision")
    ContentRevision.objects.get_or_create(pk=1, defaults={"changed_at": timezone.now()})


class Migration(migrations.Migration):

    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="ContentRevision",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveBigIntegerField(default=0, verbose_name="number")),
                ("changed_at", models.DateTimeField(verbose_name="changed at")),
            ],
            options={
                "verbose_name": "content revision",
                "verbose_name_plural": "content revisions",
            },
        ),
        migrations.RunPython(create_revision, migrations.RunPython.noop),
    ]
