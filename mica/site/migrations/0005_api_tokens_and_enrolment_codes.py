"""API tokens as digests (django-rest-knox) and second-factor enrolment codes.

DRF's tokens (rest_framework.authtoken, no longer installed) kept every key in clear,
readable by any staff account allowed to view them. Each is moved to knox's table as
the digest knox computes, so an existing key keeps working and is never shown again;
then DRF's table, its migration records and its permissions go.
"""

import hashlib

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

OLD_TABLE = "authtoken_token"
# knox.settings.CONSTANTS.TOKEN_KEY_LENGTH: the characters knox looks a key up by.
TOKEN_KEY_LENGTH = 15


def knox_digest(key):
    """knox.crypto.hash_token under knox's default SECURE_HASH_ALGORITHM (SHA-512), the
    portal's setting, written out so this migration means the same whatever changes."""
    return hashlib.sha512(key.encode("utf-8")).hexdigest()


def tokens_to_digests(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    AuthToken = apps.get_model("knox", "AuthToken")
    quoted = schema_editor.quote_name(OLD_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {schema_editor.quote_name('key')}, user_id, created FROM {quoted}")
        rows = cursor.fetchall()
    for key, user_id, created in rows:
        token = AuthToken(
            digest=knox_digest(key),
            token_key=key[:TOKEN_KEY_LENGTH],
            user_id=user_id,
            expiry=None,
        )
        token.save(force_insert=True)
        # auto_now_add set it to now: the token's age is its own.
        AuthToken.objects.filter(pk=token.pk).update(created=created)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {quoted}")
        cursor.execute("DELETE FROM django_migrations WHERE app = %s", ["authtoken"])
    # Its permissions (view_token among them) and the grants of them go with it.
    ContentType = apps.get_model("contenttypes", "ContentType")
    ContentType.objects.filter(app_label="authtoken").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("knox", "0009_extend_authtoken_field"),
        ("site", "0004_pg_trgm"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.CreateModel(
            name="ApiToken",
            fields=[],
            options={
                "verbose_name": "API token",
                "verbose_name_plural": "API tokens",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("knox.authtoken",),
        ),
        migrations.CreateModel(
            name="EnrolmentCode",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "digest",
                    models.CharField(
                        editable=False, max_length=64, unique=True, verbose_name="digest"
                    ),
                ),
                ("issued_at", models.DateTimeField(editable=False, verbose_name="issued at")),
                ("expires_at", models.DateTimeField(editable=False, verbose_name="expires at")),
                (
                    "used_at",
                    models.DateTimeField(
                        blank=True, editable=False, null=True, verbose_name="used at"
                    ),
                ),
                (
                    "issued_by",
                    models.ForeignKey(
                        blank=True,
                        help_text="Empty when issued on the server, by manage.py.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="issued by",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                        verbose_name="account",
                    ),
                ),
            ],
            options={
                "verbose_name": "second-factor enrolment code",
                "verbose_name_plural": "second-factor enrolment codes",
                "ordering": ["-issued_at"],
            },
        ),
        migrations.RunPython(tokens_to_digests, migrations.RunPython.noop),
    ]
