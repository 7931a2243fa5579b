"""No one removes another person's second factor without a verified superuser and a
notice (issue 44, item 1, "No one acts for another without a trace").

Finding: "A staff account that needs no second factor but holds
`otp_totp.delete_totpdevice` deletes a superuser's authenticator with its password
alone, shutting them out." Now removing another person's device needs a superuser whose
session confirmed a code, and the owner and the other administrators are e-mailed.

Through the admin's real POSTs, after-commit callbacks executed, the outbox's mail read.
"""

import pytest
from django.contrib.auth.models import Permission, User
from django.core import mail
from django_otp.plugins.otp_totp.models import TOTPDevice

from mica.errors import PermissionRefused
from mica.site.enrolment import device_remove
from tests.factories import PASSWORD, LeadFactory, StaffFactory, totp_device

pytestmark = pytest.mark.django_db

DEVICES = "/admin/otp_totp/totpdevice/"


def delete_page(device):
    return f"{DEVICES}{device.pk}/delete/"


def bulk_delete(client, *devices):
    return client.post(
        DEVICES,
        {"action": "delete_selected", "_selected_action": [d.pk for d in devices], "post": "yes"},
    )


@pytest.fixture
def victim(db):
    """A superuser with an enrolled authenticator."""
    person = LeadFactory(username="victim")
    return totp_device(person)


@pytest.fixture
def device_clerk(db):
    """Staff who need no second factor, granted every permission on devices."""
    person = StaffFactory(username="device-clerk")
    person.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="otp_totp", codename__endswith="device")
    )
    return User.objects.get(pk=person.pk)


def test_staff_with_the_delete_permission_cannot_remove_a_superusers_device(
    client, victim, device_clerk, django_capture_on_commit_callbacks, eager_celery
):
    """The finding as it was: the clerk signs in with the password alone (no second
    factor is asked of them) and posts the admin's delete confirmation for the
    superuser's device. Refused, the device stays, and nobody is told anything happened.
    A session that did confirm a code is refused all the same: the permission does not
    reach another person's device."""
    assert (
        client.post("/admin/login/", {"username": "device-clerk", "password": PASSWORD}).status_code
        == 302
    )
    assert client.get(DEVICES).status_code == 200  # the clerk does see the list
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(delete_page(victim), {"post": "yes"}).status_code == 403
        bulk_delete(client, victim)
    assert TOTPDevice.objects.filter(pk=victim.pk).exists()
    assert 'value="delete_selected"' not in client.get(DEVICES).text

    verified = type(client)()
    verified.force_login(device_clerk)  # the password and a code of the clerk's own device
    own = TOTPDevice.objects.get(user=device_clerk)
    with django_capture_on_commit_callbacks(execute=True):
        assert verified.get(delete_page(victim)).status_code == 403
        assert verified.post(delete_page(victim), {"post": "yes"}).status_code == 403
        assert bulk_delete(verified, victim, own).status_code == 403
    assert TOTPDevice.objects.filter(pk__in=[victim.pk, own.pk]).count() == 2
    assert not mail.outbox

    # The service says the same to any other caller.
    with pytest.raises(PermissionRefused):
        device_remove(device=victim, actor=device_clerk)
    assert TOTPDevice.objects.filter(pk=victim.pk).exists()


def test_one_removes_ones_own_device_only_in_a_verified_session(
    client, device_clerk, django_capture_on_commit_callbacks, eager_celery
):
    own = totp_device(device_clerk)
    client.post("/admin/login/", {"username": "device-clerk", "password": PASSWORD})
    assert client.post(delete_page(own), {"post": "yes"}).status_code == 403
    assert TOTPDevice.objects.filter(pk=own.pk).exists()

    verified = type(client)()
    verified.force_login(device_clerk)
    with django_capture_on_commit_callbacks(execute=True):
        assert verified.post(delete_page(own), {"post": "yes"}).status_code == 302
    assert not TOTPDevice.objects.filter(pk=own.pk).exists()
    assert {address for message in mail.outbox for address in message.to} >= {
        "device-clerk@example.org"
    }


def test_a_verified_superuser_removes_anothers_device_and_everyone_is_told(
    client, victim, django_capture_on_commit_callbacks, eager_celery
):
    """A verified superuser removes another superuser's device (a lost phone); the owner
    and every other administrator get a mail saying who removed it."""
    LeadFactory(username="third-admin")
    lead = LeadFactory(username="acting-admin")
    client.force_login(lead)
    assert client.get(delete_page(victim)).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(delete_page(victim), {"post": "yes"})
    assert response.status_code == 302
    assert not TOTPDevice.objects.filter(pk=victim.pk).exists()
    told = {address for message in mail.outbox for address in message.to}
    assert {"victim@example.org", "third-admin@example.org"} <= told
    notice = next(m for m in mail.outbox if m.to == ["victim@example.org"])
    assert "removed" in notice.subject and "acting-admin" in notice.body
    # In English and in Korean: the portal does not know a staff member's language.
    assert "----" in notice.body and any("\uac00" <= ch <= "\ud7a3" for ch in notice.body)
