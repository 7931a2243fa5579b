"""Expire every API token whose key the portal once kept in clear, and tell its owner.

0005 moved DRF's tokens (rest_framework.authtoken) to django-rest-knox's digests so the
keys kept working, but until then each key was readable by any staff account allowed to
view tokens: a key that was readable must be assumed copied. Such a token cannot be told
from a later one by its row, only by its age: DRF's tokens kept their own creation time,
older than the moment 0005 was applied, and every token the portal issued since is
younger. So every token created up to then, still valid, expires now.

Each owner is told in a row of the mail outbox (submissions.OutboxMessage), in English
and in Korean: the outbox sweep that beat runs mails pending rows (OUTBOX_SWEEP_INTERVAL),
so nothing is sent from inside the migration and nothing is lost if mail is down. An
owner without an e-mail address is named to the active superusers instead, who tell
them. Run again, it finds nothing left to expire and sends nothing.
"""

import datetime
from collections import defaultdict

from django.conf import settings
from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Q
from django.utils import timezone

DIGEST_MIGRATION = ("site", "0005_api_tokens_and_enrolment_codes")
PREFIX_SHOWN = 8

# Written out here, not taken from the catalogue: a migration means the same whatever
# changes later. The two languages are joined as the portal joins its staff notices.
SUBJECT = (
    "MICA portal: an API token of {account} no longer works"
    " / MICA 포털: {account} 계정의 API 토큰을 더 이상 쓸 수 없습니다"
)
BODY_EN = (
    "Until {moved} the portal kept the keys of API tokens in clear, where staff allowed "
    "to view tokens could read them. A key that could be read may have been copied, so "
    "every such token of the account {account} expired at {now} and the API refuses it. "
    "Keys concerned (their first characters): {prefixes}\n\n"
    "Ask an administrator for a new token (its key is shown once, to whoever issues it) "
    "and put the new key wherever the old one was used."
)
BODY_KO = (
    "포털은 {moved}까지 API 토큰의 키를 평문으로 보관했으며, 그동안 토큰을 볼 권한이 있는 "
    "직원은 그 키를 읽을 수 있었습니다. 읽을 수 있었던 키는 복사되었을 수 있으므로 "
    "{account} 계정의 해당 토큰은 모두 {now}에 만료되었고, API는 더 이상 받지 않습니다. "
    "해당 키(앞부분): {prefixes}\n\n"
    "관리자에게 새 토큰을 요청하고(새 키는 발급하는 사람에게 한 번만 표시됩니다), 예전 키를 "
    "쓰던 곳에 새 키를 넣으세요."
)
NO_ADDRESS_EN = (
    "The account {account} has no e-mail address, so this notice goes to the "
    "administrators: please tell its owner."
)
NO_ADDRESS_KO = (
    "{account} 계정에는 이메일 주소가 없어 이 알림을 관리자에게 보냅니다. 계정 주인에게 "
    "알려 주세요."
)


def _when(moment):
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _digest_migration_applied(connection):
    """When 0005 moved DRF's keys to digests, or None where it never ran."""
    recorder = MigrationRecorder(connection)
    if not recorder.has_table():
        return None
    app, name = DIGEST_MIGRATION
    return (
        recorder.migration_qs.filter(app=app, name=name).values_list("applied", flat=True).first()
    )


def rotate_keys_once_in_clear(apps, schema_editor, now=None):
    AuthToken = apps.get_model("knox", "AuthToken")
    OutboxMessage = apps.get_model("submissions", "OutboxMessage")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    moved = _digest_migration_applied(schema_editor.connection)
    if moved is None:
        return
    now = now or timezone.now()
    once_in_clear = AuthToken.objects.filter(created__lte=moved).filter(
        Q(expiry=None) | Q(expiry__gt=now)
    )
    prefixes = defaultdict(list)
    for user_id, token_key in once_in_clear.order_by("created").values_list("user_id", "token_key"):
        prefixes[user_id].append(f"{token_key[:PREFIX_SHOWN]}…")
    if not prefixes:
        return
    once_in_clear.update(expiry=now)

    administrators = list(
        User.objects.filter(is_superuser=True, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    for owner in User.objects.filter(pk__in=prefixes).order_by("pk"):
        names = {
            "account": owner.username,
            "prefixes": ", ".join(prefixes[owner.pk]),
            "moved": _when(moved),
            "now": _when(now),
        }
        english, korean = BODY_EN.format(**names), BODY_KO.format(**names)
        recipients = [owner.email] if owner.email else administrators
        if not owner.email:
            english += "\n\n" + NO_ADDRESS_EN.format(**names)
            korean += "\n\n" + NO_ADDRESS_KO.format(**names)
        for address in sorted(set(recipients)):
            OutboxMessage.objects.create(
                to=address,
                subject=SUBJECT.format(**names)[:200],
                body=f"{english}\n\n----\n\n{korean}",
            )


class Migration(migrations.Migration):
    dependencies = [
        ("site", "0006_api_token_issues"),
        ("knox", "0009_extend_authtoken_field"),
        ("submissions", "0004_outboxmessage"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(rotate_keys_once_in_clear, migrations.RunPython.noop),
    ]
