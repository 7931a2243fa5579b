from django.db import migrations, models


def freeze_what_was_validated_or_published(apps, schema_editor):
    """Versions validated before this migration, and those a published edition holds,
    are frozen as they stand."""
    from django.core.exceptions import FieldDoesNotExist
    from django.utils import timezone

    TaskVersion = apps.get_model("catalogue", "TaskVersion")
    TaskEvent = apps.get_model("catalogue", "TaskEvent")
    Edition = apps.get_model("methodology", "Edition")
    now = timezone.now()
    validated = TaskVersion.objects.filter(
        pk__in=TaskEvent.objects.filter(action__in=("promote", "make_current")).values("version")
    )
    # A fresh database has nothing to freeze, and an update's after-commit step would read
    # tables a later migration creates.
    if not TaskVersion.objects.exists():
        return
    validated.update(frozen_at=now)
    try:
        Edition._meta.get_field("catalogue_snapshot")
    except FieldDoesNotExist:
        return  # no edition froze a catalogue before the field existed
    held = {
        (entry["slug"], entry["version"])
        for snapshot in Edition.objects.exclude(status="draft").values_list(
            "catalogue_snapshot", flat=True
        )
        for entry in snapshot or []
    }
    for pk, slug, number in TaskVersion.objects.values_list("pk", "definition__slug", "version"):
        if (slug, number) in held:
            TaskVersion.objects.filter(pk=pk).update(frozen_at=now)


class Migration(migrations.Migration):
    dependencies = [
        ("catalogue", "0007_references_in_the_content_hash"),
        # Any state with the Edition table: depending on the latest methodology migration
        # would pull it before the apps its own steps read (a fresh deployment's migrate).
        ("methodology", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="taskversion",
            name="frozen_at",
            field=models.DateTimeField(
                blank=True, editable=False, null=True, verbose_name="frozen"
            ),
        ),
        migrations.AddField(
            model_name="historicaltaskversion",
            name="frozen_at",
            field=models.DateTimeField(
                blank=True, editable=False, null=True, verbose_name="frozen"
            ),
        ),
        migrations.RunPython(freeze_what_was_validated_or_published, migrations.RunPython.noop),
        # The triggers themselves are made after the whole migrate (mica.frozen_rows, a
        # post_migrate receiver): made here, they would stand on tables that a later
        # methodology migration rebuilds, which SQLite does by dropping them.
    ]
