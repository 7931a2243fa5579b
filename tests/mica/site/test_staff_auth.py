"""Staff sign-in (issue 17, item 4): lockout after repeated wrong passwords, in the admin
and through HTTP Basic auth on the API, per username and client address; a second factor
in the admin for accounts that see holdout tasks or publish an edition.

Real requests through Django's test client (and one through a live server), the real
axes and django-otp records; the clock is moved by moving the records' own times."""

import base64
import datetime
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest
from axes.models import AccessAttempt, AccessFailureLog
from django.contrib.auth.models import Permission
from django_otp.plugins.otp_totp.models import TOTPDevice

from governance.models import PersonDeclaration
from mica.site.staff import second_factor_required
from tests.factories import PASSWORD, LeadFactory, StaffFactory, totp_code, totp_device

pytestmark = pytest.mark.django_db

ELSEWHERE = "203.0.113.9"


@pytest.fixture
def limit(settings):
    return settings.AXES_FAILURE_LIMIT


@pytest.fixture
def clerk(db):
    """Staff with no rights that call for a second factor."""
    return StaffFactory(username="clerk")


def admin_login(client, username, password, prefix="", **extra):
    return client.post(
        f"{prefix}/admin/login/?next={prefix}/admin/",
        {"username": username, "password": password, "next": f"{prefix}/admin/"},
        **extra,
    )


def signed_in(response, prefix=""):
    return response.status_code == 302 and response["Location"].endswith(f"{prefix}/admin/")


def fail(client, username, times, **extra):
    for _ in range(times):
        response = admin_login(client, username, "wrong-password", **extra)
    return response


def backdate_failures(username, hours):
    AccessAttempt.objects.filter(username=username).update(
        attempt_time=datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=hours)
    )


# --- Lockout in the admin ----------------------------------------------------------------


def test_the_failure_limit_is_ten_at_most_by_default(limit, settings):
    """Logins are not throttled: 30 wrong passwords and then the right one works at once.
    The acceptance: "after the configured number of wrong passwords (10 at most by
    default)"."""
    assert 1 <= limit <= 10
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AXES_COOLOFF_TIME >= datetime.timedelta(minutes=15)


def test_after_the_limit_the_right_password_fails_in_the_admin(client, clerk, limit):
    """Logins are not throttled: 30 wrong passwords and then the right one works at once
    (in the admin). Now the limit's failure already answers the lockout page, and the
    right password gets it too."""
    assert limit > 1
    for _ in range(limit - 1):
        assert admin_login(client, "clerk", "wrong-password").status_code == 200
    locked = admin_login(client, "clerk", "wrong-password")
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.text
    right = admin_login(client, "clerk", PASSWORD)
    assert right.status_code == 429 and not signed_in(right)
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302  # to the login page


def test_the_lockout_page_speaks_korean_under_ko(client, clerk, limit):
    """Logins are not throttled: the lockout that now follows says why in the request's
    language."""
    fail(client, "clerk", limit, prefix="/ko")
    locked = admin_login(client, "clerk", PASSWORD, prefix="/ko")
    assert locked.status_code == 429
    assert '<html lang="ko"' in locked.text
    english = admin_login(client, "clerk", PASSWORD)
    assert english.status_code == 429 and '<html lang="en"' in english.text


def test_another_client_address_is_not_locked(client, clerk, limit):
    """Logins are not throttled, and the throttle must not be a weapon: one address's
    wrong passwords lock that username from that address only, not the real user
    signing in from elsewhere."""
    fail(client, "clerk", limit + 5)
    assert admin_login(client, "clerk", PASSWORD).status_code == 429
    assert signed_in(admin_login(client, "clerk", PASSWORD, REMOTE_ADDR=ELSEWHERE))


def test_other_accounts_from_the_same_address_are_not_locked(client, clerk, limit):
    """Logins are not throttled; the lockout is per username and address together."""
    StaffFactory(username="colleague")
    fail(client, "clerk", limit)
    assert signed_in(admin_login(client, "colleague", PASSWORD))


def test_the_lockout_ends_after_the_cool_off(client, clerk, limit, settings):
    """Logins are not throttled: locked out, the right password works again once the
    cool-off has passed since the last failure (the failures' times moved back)."""
    fail(client, "clerk", limit)
    assert admin_login(client, "clerk", PASSWORD).status_code == 429
    cool_off_hours = settings.AXES_COOLOFF_TIME.total_seconds() / 3600
    backdate_failures("clerk", hours=cool_off_hours * 0.9)
    assert admin_login(client, "clerk", PASSWORD).status_code == 429
    backdate_failures("clerk", hours=cool_off_hours + 0.1)
    assert signed_in(admin_login(client, "clerk", PASSWORD))


def test_an_administrator_sees_the_lockout_and_unlocks_it(client, clerk, limit):
    """Logins are not throttled: the lockout is visible in the admin (both languages)
    and an administrator's "Unlock" lets the right password in at once."""
    fail(client, "clerk", limit)
    assert admin_login(client, "clerk", PASSWORD).status_code == 429
    lead = LeadFactory()
    admin = type(client)()
    admin.force_login(lead)
    index = admin.get("/admin/")
    assert "/admin/axes/accessattempt/" in index.text and "Sign-in lockouts" in index.text
    korean = admin.get("/ko/admin/")
    assert "/ko/admin/axes/accessattempt/" in korean.text
    listing = admin.get("/admin/axes/accessattempt/?locked=yes")
    assert listing.status_code == 200 and "clerk" in listing.text
    assert admin.get("/admin/axes/accessfailurelog/").status_code == 200
    attempt = AccessAttempt.objects.get(username="clerk")
    response = admin.post(
        "/admin/axes/accessattempt/",
        {"action": "unlock", "_selected_action": [attempt.pk]},
        follow=True,
    )
    assert "1 sign-in unlocked" in response.text
    assert not AccessAttempt.objects.filter(username="clerk").exists()
    # The failures stay on record after the unlock.
    assert AccessFailureLog.objects.filter(username="clerk", locked_out=True).exists()
    assert signed_in(admin_login(client, "clerk", PASSWORD))


def test_deleting_the_attempt_in_the_admin_unlocks_too(client, clerk, limit):
    """Logins are not throttled: deleting the lockout record is a reset as well."""
    fail(client, "clerk", limit)
    admin = type(client)()
    admin.force_login(LeadFactory())
    attempt = AccessAttempt.objects.get(username="clerk")
    response = admin.post(f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert signed_in(admin_login(client, "clerk", PASSWORD))


def test_odd_login_input_never_answers_500(client, clerk):
    """No input yields a 500: the login form with NUL bytes, huge or missing fields."""
    for data in (
        {"username": "clerk\x00", "password": "x\x00"},
        {"username": "x" * 5000, "password": "y" * 5000},
        {"username": "", "password": ""},
        {},
    ):
        # A NUL is refused before any view (mica.site.middleware.NulInputMiddleware).
        assert client.post("/admin/login/", data).status_code in {200, 400, 429}


# --- Lockout on the API ------------------------------------------------------------------


def basic(username, password):
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_http_basic_auth_on_the_api_locks_out_too(client, clerk, limit):
    """Logins are not throttled: 30 wrong passwords and then the right one works at once
    (through HTTP Basic auth on the API). Now, after the limit, the right password gets
    429 with a JSON reason, in the request's language, from that address only."""
    assert client.get("/api/v1/markets/", **basic("clerk", PASSWORD)).status_code == 200
    for _ in range(limit):
        assert client.get("/api/v1/markets/", **basic("clerk", "wrong")).status_code in {401, 429}
    locked = client.get("/api/v1/markets/", **basic("clerk", PASSWORD))
    assert locked.status_code == 429
    assert locked.json()["detail"].startswith("Too many failed sign-ins")
    assert "Retry-After" in locked
    korean = client.get("/api/v1/markets/", HTTP_ACCEPT_LANGUAGE="ko", **basic("clerk", PASSWORD))
    assert korean.status_code == 429 and korean.json()["detail"]
    elsewhere = client.get("/api/v1/markets/", REMOTE_ADDR=ELSEWHERE, **basic("clerk", PASSWORD))
    assert elsewhere.status_code == 200
    # The admin shares the count: the same pair is locked there as well.
    assert admin_login(client, "clerk", PASSWORD).status_code == 429


def test_odd_basic_credentials_never_answer_500(client, clerk):
    """No input yields a 500: Basic credentials with NUL, huge or malformed."""
    for header in (
        basic("clerk\x00", "x"),
        basic("x" * 5000, "y" * 5000),
        basic("", ""),
        {"HTTP_AUTHORIZATION": "Basic not-base64!"},
    ):
        assert client.get("/api/v1/markets/", **header).status_code in {401, 429}


def test_token_auth_is_not_counted(client, clerk, limit):
    """Logins are not throttled; a token is not a password, so wrong tokens are not
    counted against the account's password sign-ins."""
    for _ in range(limit + 2):
        client.get("/api/v1/markets/", HTTP_AUTHORIZATION="Token not-a-token")
    assert not AccessAttempt.objects.exists()
    assert signed_in(admin_login(client, "clerk", PASSWORD))


# --- The second factor -------------------------------------------------------------------


def holdout_permission():
    return Permission.objects.get(content_type__app_label="catalogue", codename="view_holdout")


def test_who_needs_a_second_factor(clerk):
    """Accounts with holdout access or publishing rights need a second factor: superusers
    (only they publish an edition), the holdout permission, a declaration of holdout
    access. Others do not."""
    assert not second_factor_required(clerk)
    assert second_factor_required(LeadFactory())
    keeper = StaffFactory(username="keeper")
    keeper.user_permissions.add(holdout_permission())
    assert second_factor_required(type(keeper).objects.get(pk=keeper.pk))
    declared = StaffFactory(username="declared")
    PersonDeclaration.objects.create(user=declared, holdout_access=True)
    assert second_factor_required(declared)
    undeclared = StaffFactory(username="undeclared")
    PersonDeclaration.objects.create(user=undeclared, holdout_access=False)
    assert not second_factor_required(undeclared)


def test_a_lead_cannot_open_the_admin_with_the_password_alone(client):
    """Staff authentication: an account with publishing rights reaches the admin index
    only with a TOTP code; a wrong code is refused."""
    lead = LeadFactory()
    device = totp_device(lead)
    response = admin_login(client, "lead", PASSWORD)
    assert response.status_code == 302
    index = client.get("/admin/")
    assert index.status_code == 302 and index["Location"].startswith("/admin/second-factor/")
    assert client.get("/admin/methodology/edition/").status_code == 302
    step = client.get(index["Location"])
    assert step.status_code == 200 and 'name="code"' in step.text
    wrong = f"{(int(totp_code(device)) + 1) % 1000000:06d}"
    refused = client.post(index["Location"], {"code": wrong, "next": "/admin/"})
    assert refused.status_code == 200 and "That code is not right" in refused.text
    assert client.get("/admin/").status_code == 302
    device.refresh_from_db()
    device.throttling_failure_count = 0
    device.throttling_failure_timestamp = None
    device.save()
    accepted = client.post(index["Location"], {"code": totp_code(device), "next": "/admin/"})
    assert accepted.status_code == 302 and accepted["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_the_second_step_refuses_junk_and_foreign_redirects(client):
    """No input yields a 500, and the step never sends anyone off the site."""
    lead = LeadFactory()
    device = totp_device(lead)
    admin_login(client, "lead", PASSWORD)
    for code in ("", "abc", "1" * 5000, "12\x0034", "１２３４５６"):
        expected = 400 if "\x00" in code else 200  # a NUL is refused before any view
        assert client.post("/admin/second-factor/", {"code": code}).status_code == expected
    device.refresh_from_db()
    device.throttling_failure_count = 0
    device.throttling_failure_timestamp = None
    device.save()
    response = client.post(
        "/admin/second-factor/", {"code": totp_code(device), "next": "https://evil.example/"}
    )
    assert response.status_code == 302 and response["Location"] == "/admin/"


def test_a_holdout_keeper_without_a_device_enrols_one(client):
    """Staff authentication: an account with holdout access and no device is sent to
    enrol one (with the one-time code an administrator issued, then the otpauth://
    address and the secret as text), confirms it with one code, and only then reaches
    the admin; the next session asks for a code again."""
    from mica.site.enrolment import enrolment_code_issue

    declared = StaffFactory(username="declared")
    PersonDeclaration.objects.create(user=declared, holdout_access=True)
    _record, enrolment_code = enrolment_code_issue(user=declared, actor=None)
    admin_login(client, "declared", PASSWORD)
    index = client.get("/ko/admin/")
    assert index["Location"].startswith("/ko/admin/second-factor/enrol/")
    assert 'name="enrolment_code"' in client.get(index["Location"]).text
    client.post(index["Location"], {"enrolment_code": enrolment_code})
    page = client.get(index["Location"])
    assert page.status_code == 200 and '<html lang="ko"' in page.text
    device = TOTPDevice.objects.get(user=declared, confirmed=False)
    assert "otpauth://totp/" in page.text
    assert base64.b32encode(device.bin_key).decode() in page.text
    assert client.get("/ko/admin/").status_code == 302
    done = client.post(index["Location"], {"code": totp_code(device), "next": "/ko/admin/"})
    assert done.status_code == 302 and done["Location"] == "/ko/admin/"
    assert TOTPDevice.objects.get(pk=device.pk).confirmed
    assert client.get("/ko/admin/").status_code == 200
    client.post("/admin/logout/")
    admin_login(client, "declared", PASSWORD)
    assert client.get("/admin/")["Location"].startswith("/admin/second-factor/?")


def test_staff_without_such_rights_are_not_asked(client, clerk):
    """Staff authentication: the second factor is for holdout access and publishing
    rights; other staff reach the admin with their password as before."""
    assert signed_in(admin_login(client, "clerk", PASSWORD))
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/second-factor/").status_code == 302
    assert not TOTPDevice.objects.filter(user=clerk).exists()


def test_the_second_factor_is_asked_only_in_the_admin(client):
    """Staff authentication: the public site and the API do not ask for the code."""
    LeadFactory()
    admin_login(client, "lead", PASSWORD)
    assert client.get("/").status_code == 200
    assert client.get("/api/v1/markets/").status_code == 200


# --- Through a live server ---------------------------------------------------------------


def test_a_lockout_over_real_http(live_server, limit):
    """Logins are not throttled: 30 wrong passwords and then the right one works at once.
    Over a real socket, the limit's failures lock the account and the right password
    gets the lockout page."""
    StaffFactory(username="remote-clerk")
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login_url = f"{live_server.url}/admin/login/"
    opener.open(login_url).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")

    def post(password):
        body = urllib.parse.urlencode(
            {"username": "remote-clerk", "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        try:
            with opener.open(urllib.request.Request(login_url, data=body)) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    for _ in range(limit):
        post("wrong-password")
    status, body = post(PASSWORD)
    assert status == 429 and "Too many failed sign-ins" in body
