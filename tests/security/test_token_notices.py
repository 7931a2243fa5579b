"""No one acts for another through the API without a trace (issue 44, item 1).

Findings: "A verified superuser can mint a token for the holdout keeper and record as
them with no notice." Now issuing a token for another account e-mails that account and
the other administrators, and the token list says who issued it. "The DRF keys exposed in
clear last round were migrated to digests and still work": mica/site/migrations/0007
expires every one of them and tells its owner through the mail outbox.

Through the admin's real POSTs, after-commit callbacks executed, the outbox's mail read.
"""

import datetime
import re
import types
from importlib import import_module

import pytest
from django.apps import apps
from django.core import mail
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from knox.models import AuthToken

from mica.site.models import ApiTokenIssue
from submissions.models import OutboxMessage
from submissions.outbox import outbox_sweep
from tests.factories import LeadFactory, UserFactory, holdout_keeper

pytestmark = pytest.mark.django_db

TOKENS = "/admin/site/apitoken/"
SHOWN_ONCE = re.compile(r'<code id="shown-once" class="shown-once">([^<]+)</code>')
ROTATION = import_module("mica.site.migrations.0007_rotate_keys_once_in_clear")


def authenticates(client, key):
    """Whether the API takes `key` (an empty batch is refused for what it holds, 400,
    never for who sent it, 401)."""
    response = client.post(
        "/api/v1/attempts/",
        "[]",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {key}",
    )
    return response.status_code != 401


def row_of(listing, prefix):
    rows = [row for row in re.findall(r"<tr[^>]*>.*?</tr>", listing, re.S) if prefix in row]
    assert len(rows) == 1, prefix
    return rows[0]


def test_a_token_minted_for_another_account_is_told_and_listed_with_its_issuer(
    client, canonical_content, django_capture_on_commit_callbacks, eager_celery
):
    """The finding: the lead, a verified superuser, mints a token for the holdout keeper.
    The keeper and the other administrator are e-mailed who issued it (never its key),
    and the token list names the issuer; the record of the issue outlives the token."""
    keeper = holdout_keeper()
    LeadFactory(username="admin-two")
    lead = LeadFactory(username="acting-lead")
    client.force_login(lead)  # the password and a TOTP code
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{TOKENS}add/", {"user": keeper.pk})
    assert response.status_code == 200
    key = SHOWN_ONCE.search(response.text).group(1)
    assert "told by e-mail" in response.text

    told = {address for message in mail.outbox for address in message.to}
    assert {"holdout-keeper@example.org", "admin-two@example.org"} <= told
    notice = next(m for m in mail.outbox if m.to == ["holdout-keeper@example.org"])
    assert "holdout-keeper" in notice.subject and "acting-lead" in notice.body
    assert key[:8] in notice.body
    assert not [m for m in mail.outbox if key in m.body or key[:9] in m.body]
    assert any("\uac00" <= ch <= "\ud7a3" for ch in notice.body)  # and in Korean

    # A token from before issuers were recorded says so, beside the new one.
    older, _older_key = AuthToken.objects.create(user=lead)
    listing = client.get(TOKENS).text
    assert "acting-lead" in row_of(listing, key[:8])
    assert "not recorded" in row_of(listing, older.token_key[:8])
    token = AuthToken.objects.get(user=keeper)
    assert "acting-lead" in client.get(f"{TOKENS}{token.pk}/change/").text
    korean = client.get(f"/ko{TOKENS}").text
    assert "not recorded" not in korean and "acting-lead" in row_of(korean, key[:8])

    # Revoked, the token goes; who issued it for whom stays.
    client.post(f"{TOKENS}{token.pk}/delete/", {"post": "yes"})
    assert not authenticates(client, key)
    issue = ApiTokenIssue.objects.get(account=keeper)
    assert issue.token is None and issue.issued_by == lead and issue.prefix == f"{key[:8]}…"


def test_a_key_once_kept_in_clear_expires_and_its_owner_is_told(
    client, canonical_content, eager_celery
):
    """The rotation: a token created before DRF's keys were moved to digests (as every
    moved one was) expires and its owner is told, in a row of the outbox that the sweep
    mails; a token issued since is left alone; an owner without an address is named to
    the administrators; run again, nothing more happens."""
    moved = (
        MigrationRecorder.Migration.objects.filter(app="site", name__startswith="0005_")
        .values_list("applied", flat=True)
        .get()
    )
    operator = UserFactory(username="harbor-ops")
    silent = UserFactory(username="no-address", email="")
    LeadFactory(username="admin-two")
    exposed, exposed_key = AuthToken.objects.create(user=operator)
    unreachable, _unreachable_key = AuthToken.objects.create(user=silent)
    recent, recent_key = AuthToken.objects.create(user=operator)
    for token in (exposed, unreachable):
        AuthToken.objects.filter(pk=token.pk).update(created=moved - datetime.timedelta(days=30))
    assert authenticates(client, exposed_key)

    editor = types.SimpleNamespace(connection=connection)
    ROTATION.rotate_keys_once_in_clear(apps, editor)

    assert not authenticates(client, exposed_key)
    assert authenticates(client, recent_key)
    assert AuthToken.objects.get(pk=unreachable.pk).expiry <= timezone.now()
    notices = list(OutboxMessage.objects.order_by("to"))
    assert [n.to for n in notices] == ["admin-two@example.org", "harbor-ops@example.org"]
    to_owner = notices[1]
    assert exposed.token_key[:8] in to_owner.body and recent.token_key[:8] not in to_owner.body
    assert "harbor-ops" in to_owner.subject and "expired" in to_owner.body
    assert "----" in to_owner.body and "만료" in to_owner.body
    assert "no-address" in notices[0].body and "tell its owner" in notices[0].body

    # The outbox's sweep mails what the migration queued.
    outbox_sweep(now=timezone.now() + datetime.timedelta(days=1))
    assert {address for message in mail.outbox for address in message.to} == {
        "admin-two@example.org",
        "harbor-ops@example.org",
    }

    ROTATION.rotate_keys_once_in_clear(apps, editor)
    assert OutboxMessage.objects.count() == 2
    assert authenticates(client, recent_key)
