"""Second-factor enrolment a password alone cannot complete.

A hostile probe found that whoever signed in first with a superuser's or a holdout
keeper's password enrolled their own authenticator. Now enrolment takes a one-time code
another administrator issued (or `manage.py issue_enrolment_code` on the server, for the
first one), valid for a short time; every issue, enrolment and device removal is e-mailed
to the account and the other administrators; the enrolment page shows a QR code (inline
SVG, under the CSP) beside the secret; and a second sign-in within the same 30-second
step is told why its code was refused.

Real requests through Django's test client and the real admin, with after-commit steps
(the outbox's mail) executed."""

import base64
import datetime
import io
import re

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django_otp.plugins.otp_totp.models import TOTPDevice

from governance.models import PersonDeclaration
from mica.site.models import EnrolmentCode
from tests.factories import PASSWORD, LeadFactory, StaffFactory, totp_code, totp_device

pytestmark = pytest.mark.django_db

ENROL = "/admin/second-factor/enrol/"
CODES = "/admin/site/enrolmentcode/"
SHOWN_ONCE = re.compile(r'<code id="shown-once" class="shown-once">([^<]+)</code>')


@pytest.fixture
def keeper(db):
    """A holdout keeper: staff whose declaration gives holdout access, with no device."""
    person = StaffFactory(username="keeper")
    PersonDeclaration.objects.create(user=person, holdout_access=True)
    return person


@pytest.fixture
def administrator(client):
    """Another administrator, signed in with the password and a TOTP code."""
    admin = type(client)()
    admin.force_login(LeadFactory(username="admin-two"))
    return admin


def sign_in(client, username):
    client.post("/admin/login/", {"username": username, "password": PASSWORD})
    return client


def issue(administrator, user):
    response = administrator.post(f"{CODES}add/", {"user": user.pk})
    assert response.status_code == 200, response.status_code
    return SHOWN_ONCE.search(response.text).group(1)


def enter(client, code):
    return client.post(ENROL, {"enrolment_code": code, "next": "/admin/"})


def confirm(client):
    device = TOTPDevice.objects.get(user__username="keeper", confirmed=False)
    return client.post(ENROL, {"code": totp_code(device), "next": "/admin/"})


def test_an_enrolment_without_the_administrators_code_is_refused(client, keeper, administrator):
    """The acceptance: an enrolment without the administrator's code is refused. The
    password alone shows no secret and makes no device; a made-up code, another
    account's code, a spent or an expired one are refused and say so."""
    sign_in(client, "keeper")
    page = client.get(ENROL)
    assert page.status_code == 200 and 'name="enrolment_code"' in page.text
    assert "otpauth://" not in page.text and not TOTPDevice.objects.filter(user=keeper).exists()
    # A TOTP code posted straight at the page confirms nothing: there is no device.
    client.post(ENROL, {"code": "123456", "next": "/admin/"})
    assert not TOTPDevice.objects.filter(user=keeper).exists()

    refused = enter(client, "ABCD-EFGH-JKLM-NPQR")
    assert "That enrolment code is not valid for this account" in refused.text
    other = StaffFactory(username="other-keeper")
    assert "not valid" in enter(client, issue(administrator, other)).text
    expired = issue(administrator, keeper)
    EnrolmentCode.objects.filter(user=keeper).update(
        expires_at=datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)
    )
    assert "not valid" in enter(client, expired).text
    korean = client.post(f"/ko{ENROL}", {"enrolment_code": expired, "next": "/ko/admin/"})
    assert '<html lang="ko"' in korean.text and "not valid" not in korean.text
    assert "otpauth://" not in korean.text
    assert not TOTPDevice.objects.filter(user=keeper).exists()
    assert client.get("/admin/").status_code == 302


def test_a_code_from_another_administrator_enrols_one_device(
    client, keeper, administrator, django_capture_on_commit_callbacks, eager_celery
):
    """The code another administrator issued, shown to them once, opens the enrolment:
    the QR code and the secret, then one TOTP code confirms the device and spends the
    code. The account and the other administrators are e-mailed at the issue and at
    the enrolment, never with the code."""
    LeadFactory(username="admin-three")
    with django_capture_on_commit_callbacks(execute=True):
        code = issue(administrator, keeper)
    record = EnrolmentCode.objects.get(user=keeper)
    assert record.issued_by.username == "admin-two" and record.used_at is None
    issued = {address for message in mail.outbox for address in message.to}
    assert issued == {"keeper@example.org", "admin-two@example.org", "admin-three@example.org"}
    assert not [m for m in mail.outbox if code in m.body or code in m.subject]
    assert code not in administrator.get(CODES).text  # listed, never shown again

    sign_in(client, "keeper")
    redirected = enter(client, code.lower().replace("-", " "))
    assert redirected.status_code == 302
    page = client.get(ENROL)
    device = TOTPDevice.objects.get(user=keeper, confirmed=False)
    assert base64.b32encode(device.bin_key).decode() in page.text
    assert "otpauth://totp/" in page.text
    qr = re.search(r'<p id="otp-qr-code">(<svg .*?</svg>)</p>', page.text, re.S).group(1)
    assert 'role="img"' in qr and 'aria-label="' in qr
    # Nothing the page's Content-Security-Policy would block: no script, no style.
    assert "style" not in qr and "<script" not in qr and "data:" not in qr
    assert "unsafe-inline" not in page["Content-Security-Policy"]

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        done = confirm(client)
    assert done.status_code == 302 and done["Location"] == "/admin/"
    assert TOTPDevice.objects.get(pk=device.pk).confirmed
    assert EnrolmentCode.objects.get(pk=record.pk).used_at is not None
    assert client.get("/admin/").status_code == 200
    enrolled = {address for message in mail.outbox for address in message.to}
    assert {"keeper@example.org", "admin-two@example.org", "admin-three@example.org"} == enrolled
    assert "enrolled" in mail.outbox[0].subject

    # The code is spent: after the device goes, it enrols nothing again.
    TOTPDevice.objects.filter(user=keeper).delete()
    again = sign_in(type(client)(), "keeper")
    assert "not valid" in enter(again, code).text


def test_a_fresh_code_makes_a_fresh_secret(client, keeper, administrator):
    """A secret shown before the code was entered again is worth nothing: each accepted
    code starts a new device."""
    sign_in(client, "keeper")
    enter(client, issue(administrator, keeper))
    first = TOTPDevice.objects.get(user=keeper)
    other = sign_in(type(client)(), "keeper")
    enter(other, issue(administrator, keeper))
    assert list(TOTPDevice.objects.filter(user=keeper)) != [first]
    assert TOTPDevice.objects.filter(user=keeper).count() == 1


def test_codes_are_issued_by_another_verified_administrator(client, keeper, administrator):
    """Issued by another administrator: never by oneself, never by staff without the
    superuser's rights, whatever permissions they hold."""
    oneself = TOTPDevice.objects.get(user__username="admin-two").user
    refused = administrator.post(f"{CODES}add/", {"user": oneself.pk})
    assert refused.status_code == 200 and "Another administrator issues" in refused.text
    assert not EnrolmentCode.objects.exists()
    clerk = StaffFactory(username="clerk", app_permissions=("site",))
    holder = type(client)()
    holder.force_login(clerk)
    assert holder.get(CODES).status_code == 403
    assert holder.post(f"{CODES}add/", {"user": keeper.pk}).status_code == 403
    assert not EnrolmentCode.objects.exists()


def test_the_first_administrator_gets_a_code_on_the_server(client):
    """Or by a `manage.py` command on the server for the first one."""
    LeadFactory()
    out, err = io.StringIO(), io.StringIO()
    call_command("issue_enrolment_code", "lead", stdout=out, stderr=err)
    code = out.getvalue().strip()
    assert re.fullmatch(r"[A-Z2-9]{4}(-[A-Z2-9]{4}){3}", code) and "Valid until" in err.getvalue()
    record = EnrolmentCode.objects.get()
    assert record.issued_by is None and record.digest != code
    sign_in(client, "lead")
    assert enter(client, code).status_code == 302
    device = TOTPDevice.objects.get(user__username="lead", confirmed=False)
    done = client.post(ENROL, {"code": totp_code(device), "next": "/admin/"})
    assert done.status_code == 302 and client.get("/admin/").status_code == 200
    with pytest.raises(CommandError):
        call_command("issue_enrolment_code", "nobody", stdout=out, stderr=err)


def test_removing_a_device_is_emailed_and_devices_are_not_added_in_the_admin(
    client, keeper, administrator, django_capture_on_commit_callbacks, eager_celery
):
    """Every device removal is e-mailed to the account and the other administrators; a
    device is never added or changed in the admin, where no code is asked."""
    device = totp_device(keeper)
    assert administrator.get("/admin/otp_totp/totpdevice/add/").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        response = administrator.post(
            f"/admin/otp_totp/totpdevice/{device.pk}/delete/", {"post": "yes"}
        )
    assert response.status_code == 302
    assert not TOTPDevice.objects.filter(pk=device.pk).exists()
    removed = {address for message in mail.outbox for address in message.to}
    assert removed == {"keeper@example.org", "admin-two@example.org"}
    assert "removed" in mail.outbox[0].subject


def test_a_second_sign_in_in_the_same_step_says_why_its_code_was_refused(client):
    """A second sign-in within the same 30-second TOTP step is told the code was already
    used, not that it is wrong."""
    lead = LeadFactory()
    device = totp_device(lead)
    code = totp_code(device)
    first = sign_in(client, "lead")
    assert first.post("/admin/second-factor/", {"code": code}).status_code == 302
    second = sign_in(type(client)(), "lead")
    refused = second.post("/admin/second-factor/", {"code": code})
    assert refused.status_code == 200
    assert "That code was already used to sign in" in refused.text
    assert "That code is not right" not in refused.text
    wrong = f"{(int(code) + 1) % 1000000:06d}"
    device.refresh_from_db()
    device.throttling_failure_count = 0
    device.save()
    assert "That code is not right" in second.post("/admin/second-factor/", {"code": wrong}).text


def test_a_code_that_runs_out_before_the_device_is_confirmed_enrols_nothing(
    client, keeper, administrator
):
    """Valid a short time: a code accepted, then expired before the first TOTP code,
    confirms no device and says why."""
    sign_in(client, "keeper")
    enter(client, issue(administrator, keeper))
    device = TOTPDevice.objects.get(user=keeper, confirmed=False)
    EnrolmentCode.objects.filter(user=keeper).update(
        expires_at=datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=1)
    )
    refused = client.post(ENROL, {"code": totp_code(device), "next": "/admin/"})
    assert refused.status_code == 200
    assert "Your enrolment code expired" in refused.text
    assert not TOTPDevice.objects.filter(user=keeper, confirmed=True).exists()
    assert client.get("/admin/").status_code == 302


def test_the_service_issues_codes_only_to_others_and_only_when_verified(keeper):
    """Whatever calls it (the admin, a command, a script), a code comes from another
    administrator whose session confirmed a code, or from the server."""
    from mica.errors import PermissionRefused
    from mica.site.enrolment import enrolment_code_issue

    lead = LeadFactory()
    lead.is_verified = lambda: True
    with pytest.raises(PermissionRefused):
        enrolment_code_issue(user=lead, actor=lead)
    lead.is_verified = lambda: False
    with pytest.raises(PermissionRefused):
        enrolment_code_issue(user=keeper, actor=lead)
    assert not EnrolmentCode.objects.exists()
    lead.is_verified = lambda: True
    assert enrolment_code_issue(user=keeper, actor=lead)[0].issued_by == lead
