"""Idempotency keys belong to their filer; every system has a slug its page answers to."""

import hashlib

from django.db import migrations, models


def _normalised(email):
    # As submissions.throttle.email_normalised was when this migration was written.
    email = (email or "").strip().lower()
    local, at, domain = email.rpartition("@")
    if not at:
        return email
    local = local.partition("+")[0]
    if domain in {"gmail.com", "googlemail.com"}:
        local, domain = local.replace(".", ""), "gmail.com"
    return f"{local}@{domain}"


def fill_filers(apps, schema_editor):
    Challenge = apps.get_model("submissions", "Challenge")
    for challenge in Challenge.objects.only("pk", "contact_email").iterator():
        filer = hashlib.sha256(_normalised(challenge.contact_email).encode()).hexdigest()
        Challenge.objects.filter(pk=challenge.pk).update(filer=filer)


def repair_slugs(apps, schema_editor):
    # A name without Latin letters once gave an empty slug, which no link can name.
    System = apps.get_model("submissions", "System")
    taken = set(System.objects.values_list("slug", flat=True))
    for system in System.objects.filter(slug=""):
        number = 1
        while (slug := "system" if number == 1 else f"system-{number}") in taken:
            number += 1
        taken.add(slug)
        System.objects.filter(pk=system.pk).update(slug=slug)


def fill_in(apps, schema_editor):
    fill_filers(apps, schema_editor)
    repair_slugs(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("submissions", "0009_recording_permissions"),
    ]

    operations = [
        migrations.AddField(
            model_name="challenge",
            name="filer",
            field=models.CharField(default="", editable=False, max_length=64, verbose_name="filer"),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="challenge",
            name="idempotency_key",
            field=models.CharField(max_length=64, verbose_name="idempotency key"),
        ),
        migrations.AddConstraint(
            model_name="challenge",
            constraint=models.UniqueConstraint(
                fields=("filer", "idempotency_key"), name="one_challenge_per_filer_key"
            ),
        ),
        # Last: rows change only once the schema no longer does (PostgreSQL refuses to
        # alter a table with pending trigger events in the same transaction).
        migrations.RunPython(fill_in, migrations.RunPython.noop),
    ]
