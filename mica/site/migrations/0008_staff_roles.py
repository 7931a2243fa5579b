"""The portal's staff roles as groups, with exactly the permissions of mica.site.roles.

A data migration rather than a post_migrate receiver: the groups are made once, so an
administrator's later edits of a group survive every restart and migrate. On a fresh
database the permissions do not exist yet (post_migrate makes them after the last
migration), so staff_roles_install makes them first; hence the dependency on the latest
migration of every app whose permissions a role names.
"""

from django.db import migrations


def install(apps, schema_editor):
    from mica.site.roles import staff_roles_install

    staff_roles_install(apps)


def remove(apps, schema_editor):
    from mica.site.roles import STAFF_ROLES

    apps.get_model("auth", "Group").objects.filter(
        name__in=[role.name for role in STAFF_ROLES]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("site", "0007_rotate_keys_once_in_clear"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("axes", "0010_accessattemptexpiration"),
        ("otp_totp", "0003_add_timestamps"),
        ("jobs", "0004_run_cause"),
        ("methodology", "0010_contract_items_numbered_per_language"),
        ("markets", "0003_platform_outages_and_replacement_drafts"),
        ("catalogue", "0009_holdout_commitments"),
        ("submissions", "0018_record_closed"),
        ("governance", "0012_cell_platforms_and_access_parity"),
    ]

    operations = [migrations.RunPython(install, remove)]
