"""Lockouts that hold (issue 33, item 6): failed sign-ins from IPv6 count per /64, as the
intake limits do; guessing spread over many addresses is slowed per username without
locking the owner out; the sign-in records are pruned by beat.

Real requests through Django's test client, the real axes records; the clock is moved by
moving the records' own times."""

import base64
import datetime

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.test import Client
from django.utils import timezone

from mica.celery import app
from mica.site import lockouts
from mica.site.tasks import sign_in_records_prune
from tests.factories import PASSWORD, StaffFactory

pytestmark = pytest.mark.django_db

NETWORK = "2001:db8:1:2"  # one subscriber's /64
NEIGHBOUR = "2001:db8:1:3"  # the /64 next to it: someone else


@pytest.fixture
def clerk(db):
    return StaffFactory(username="clerk")


@pytest.fixture
def ceiling(settings):
    assert settings.LOGIN_USERNAME_CEILING > settings.AXES_FAILURE_LIMIT
    return settings.LOGIN_USERNAME_CEILING


def admin_login(client, password, address, username="clerk", prefix=""):
    return client.post(
        f"{prefix}/admin/login/?next={prefix}/admin/",
        {"username": username, "password": password, "next": f"{prefix}/admin/"},
        REMOTE_ADDR=address,
    )


def signed_in(response):
    return response.status_code == 302 and response["Location"].endswith("/admin/")


def guesses_from_many_addresses(client, count, start=0):
    """`count` wrong passwords for clerk, each from an IPv4 address of its own."""
    for n in range(start, start + count):
        response = admin_login(client, "wrong", f"198.51.{n // 250}.{n % 250 + 1}")
        assert response.status_code == 200, response.status_code


def backdate_failures(seconds):
    """The clock moves on: every failure on record happened `seconds` earlier."""
    for failure in AccessFailureLog.objects.all():
        failure.attempt_time -= datetime.timedelta(seconds=seconds)
        failure.save(update_fields=["attempt_time"])


# --- IPv6 counts per /64 ------------------------------------------------------------------


def test_forty_five_wrong_passwords_over_one_ipv6_64_lock_that_64(client, clerk, settings):
    """Finding: "45 wrong passwords spread over one IPv6 /64" never locked it, each address
    of the subscriber's /64 counting apart. Acceptance: they lock that /64; a client in
    another /64 still signs in."""
    limit = settings.AXES_FAILURE_LIMIT
    statuses = [
        admin_login(client, "wrong", f"{NETWORK}::{n + 1:x}").status_code for n in range(45)
    ]
    assert statuses[: limit - 1] == [200] * (limit - 1)
    assert set(statuses[limit - 1 :]) == {429}
    locked = admin_login(client, PASSWORD, f"{NETWORK}:ffff:ffff:ffff:fffe")
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.text
    assert signed_in(admin_login(client, PASSWORD, f"{NEIGHBOUR}::1"))
    # The lockout names the /64 by its first address, as the intake limits count it.
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {f"{NETWORK}::"}


def test_ipv4_neighbours_still_count_apart(client, clerk, settings):
    """An IPv4 address is one client (a /64 is one subscriber, a /24 is not): the limit's
    failures from one IPv4 address do not lock the address beside it."""
    for _ in range(settings.AXES_FAILURE_LIMIT):
        admin_login(client, "wrong", "203.0.113.7")
    assert admin_login(client, PASSWORD, "203.0.113.7").status_code == 429
    assert signed_in(admin_login(client, PASSWORD, "203.0.113.8"))


def test_behind_a_trusted_proxy_the_forwarded_ipv6_client_counts_per_64(client, clerk, settings):
    """One code path for intake and sign-in: the forwarded client a trusted proxy names
    counts by its /64 for the lockout too."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(
            "/admin/login/?next=/admin/",
            {"username": "clerk", "password": "wrong", "next": "/admin/"},
            REMOTE_ADDR="10.0.0.2",
            HTTP_X_FORWARDED_FOR=f"[{NETWORK}::{n + 1:x}]:443",
        )
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {f"{NETWORK}::"}


# --- The per-username ceiling -------------------------------------------------------------


def test_guessing_spread_over_many_addresses_is_slowed_then_lets_the_owner_in(
    client, clerk, ceiling
):
    """Finding: a per-address lockout lets a guesser with many addresses try a username
    without end. Acceptance: past the ceiling, further attempts from new addresses wait
    (progressive delay, CAPTCHA-free), the refused attempt does not count, and after the
    wait the right password works: the owner is never locked out."""
    guesses_from_many_addresses(client, ceiling)
    before = AccessFailureLog.objects.count()
    slowed = admin_login(client, PASSWORD, "192.0.2.200")
    assert slowed.status_code == 429 and slowed["Retry-After"] == "1"
    assert "Try again in 1 second" in slowed.text and not signed_in(slowed)
    assert AccessFailureLog.objects.count() == before  # not a guess: never checked
    assert not AccessAttempt.objects.filter(ip_address="192.0.2.200").exists()
    backdate_failures(1)
    assert signed_in(admin_login(client, PASSWORD, "192.0.2.200"))


def test_each_guess_past_the_ceiling_doubles_the_wait_up_to_its_bound(
    client, clerk, ceiling, settings
):
    """The delay is progressive: 1 s after the ceiling's guess, then 2, 4, 8 ... and never
    more than MICA_LOGIN_USERNAME_MAX_DELAY_SECONDS."""
    settings.LOGIN_USERNAME_MAX_DELAY = 8
    guesses_from_many_addresses(client, ceiling)
    waits = []
    for n in range(6):
        refused = admin_login(client, "wrong", f"192.0.2.{n + 1}")
        assert refused.status_code == 429
        waits.append(int(refused["Retry-After"]))
        backdate_failures(waits[-1])
        assert admin_login(client, "wrong", f"192.0.2.{n + 1}").status_code == 200
    assert waits == [1, 2, 4, 8, 8, 8]


def test_the_owners_own_address_is_never_slowed(client, clerk, ceiling):
    """Without locking the real owner out: from an address the account signed in from,
    the owner signs in at once while a guesser elsewhere waits."""
    assert signed_in(admin_login(client, PASSWORD, f"{NETWORK}::10"))
    client.logout()  # the test client forgets its cookies: the address alone counts here
    guesses_from_many_addresses(client, ceiling)
    # Another address of the owner's /64 is the same place.
    assert signed_in(admin_login(client, PASSWORD, f"{NETWORK}::20"))
    client.logout()
    assert admin_login(client, PASSWORD, "192.0.2.99").status_code == 429


def test_the_owners_own_browser_is_never_slowed_by_others_guesses(client, clerk, ceiling):
    """Issue 44: "The owner's own browser (a signed device cookie set at each successful
    sign-in ...) is never slowed by others' guesses." The owner, away from every address
    they used, signs in at once from their browser, while a browser without the cookie, or
    with a forged one, at another new address waits."""
    assert signed_in(admin_login(client, PASSWORD, "198.18.0.1"))
    client.post("/admin/logout/")  # as the owner signs out: the browser keeps its cookie
    guesser = Client()
    guesses_from_many_addresses(guesser, ceiling)
    assert signed_in(admin_login(client, PASSWORD, "192.0.2.77"))
    assert admin_login(Client(), PASSWORD, "192.0.2.79").status_code == 429
    forged = Client()
    forged.cookies[lockouts.DEVICE_COOKIE] = '["clerk"]:forged:signature'
    assert admin_login(forged, PASSWORD, "192.0.2.79").status_code == 429


def test_the_device_cookie_of_another_account_does_not_exempt(client, clerk, ceiling):
    StaffFactory(username="neighbour")
    assert signed_in(admin_login(client, PASSWORD, "198.18.0.2", username="neighbour"))
    client.post("/admin/logout/")
    guesses_from_many_addresses(Client(), ceiling)
    assert admin_login(client, PASSWORD, "192.0.2.78").status_code == 429


def test_failure_records_per_username_are_bounded(client, clerk, settings):
    """Issue 44: "failure records per username are bounded". Beyond what the longest wait
    needs, older guesses are dropped, and the wait stays at its longest."""
    settings.LOGIN_USERNAME_CEILING, settings.LOGIN_USERNAME_MAX_DELAY = 3, 4
    for n in range(15):
        assert admin_login(client, "wrong", f"198.51.100.{n + 1}").status_code == 200
        backdate_failures(5)
    kept = AccessFailureLog.objects.filter(username="clerk").count()
    assert kept == lockouts.failures_kept_per_username() == 3 + 2 + 1
    backdate_failures(-5)  # the newest guess, just made
    refused = admin_login(client, "wrong", "198.51.100.200")
    assert refused.status_code == 429 and refused["Retry-After"] == "4"


def test_guesses_refused_by_an_address_lockout_do_not_reach_the_ceiling(client, clerk, ceiling):
    """Only guesses that reached the password count: a locked address hammering on adds
    nothing, so it cannot slow the owner elsewhere."""
    for _ in range(ceiling * 2):
        admin_login(client, "wrong", "203.0.113.50")
    assert signed_in(admin_login(client, PASSWORD, "203.0.113.51"))


def test_the_ceiling_counts_within_the_cool_off_only(client, clerk, ceiling, settings):
    guesses_from_many_addresses(client, ceiling)
    backdate_failures(settings.AXES_COOLOFF_TIME.total_seconds() + 1)
    assert signed_in(admin_login(client, PASSWORD, "192.0.2.77"))


def test_the_slowed_page_speaks_korean_under_ko(client, clerk, ceiling):
    guesses_from_many_addresses(client, ceiling)
    slowed = admin_login(client, PASSWORD, "192.0.2.200", prefix="/ko")
    assert slowed.status_code == 429
    assert '<html lang="ko"' in slowed.text and "로그인" in slowed.text
    assert "Too many" not in slowed.text


def basic(password):
    token = base64.b64encode(f"clerk:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_http_basic_auth_on_the_api_is_slowed_alike(client, clerk, ceiling):
    """The API's Basic auth is a password sign-in too: past the ceiling it answers 429 with
    the wait, in JSON, and nothing is counted."""
    guesses_from_many_addresses(client, ceiling)
    before = AccessFailureLog.objects.count()
    slowed = client.get("/api/v1/markets/", REMOTE_ADDR="192.0.2.201", **basic(PASSWORD))
    assert slowed.status_code == 429
    assert slowed["Retry-After"] == "1"
    assert slowed.json()["detail"].startswith("Too many failed sign-ins")
    assert AccessFailureLog.objects.count() == before
    backdate_failures(1)
    assert (
        client.get("/api/v1/markets/", REMOTE_ADDR="192.0.2.201", **basic(PASSWORD)).status_code
        == 200
    )


# --- Bounded tables -----------------------------------------------------------------------


def _aged(model, age, username="clerk", **fields):
    record = model.objects.create(
        user_agent="probe", ip_address="203.0.113.1", username=username, **fields
    )
    model.objects.filter(pk=record.pk).update(attempt_time=timezone.now() - age)
    return record.pk


def test_beat_prunes_the_sign_in_records(settings):
    """Finding: the axes tables grew without bound. Acceptance: old rows are pruned by a
    beat job; what a rule still reads (a lockout in its cool-off, recent failures and
    sign-ins) stays."""
    entry = [
        e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == sign_in_records_prune.name
    ]
    assert len(entry) == 1 and entry[0]["schedule"] <= 24 * 3600
    app.loader.import_default_modules()
    assert app.amqp.router.route({}, sign_in_records_prune.name)["queue"].name == "mail"
    cool_off = settings.AXES_COOLOFF_TIME
    kept = datetime.timedelta(days=settings.LOGIN_RECORDS_DAYS)
    second = datetime.timedelta(seconds=5)
    attempt = dict(
        failures_since_start=3, get_data="", post_data="", http_accept="*/*", path_info="/"
    )
    _aged(AccessAttempt, cool_off + second, username="gone", **attempt)
    holding = _aged(AccessAttempt, cool_off - second, **attempt)
    log = dict(http_accept="*/*", path_info="/")
    _aged(AccessFailureLog, kept + second, **log)
    _aged(AccessLog, kept + second, **log)
    recent = [_aged(AccessFailureLog, kept - second, **log), _aged(AccessLog, kept - second, **log)]
    sign_in_records_prune.apply()
    assert list(AccessAttempt.objects.values_list("pk", flat=True)) == [holding]
    assert list(AccessFailureLog.objects.values_list("pk", flat=True)) == [recent[0]]
    assert list(AccessLog.objects.values_list("pk", flat=True)) == [recent[1]]


def test_pruning_works_in_slices(settings, monkeypatch):
    """A flood leaves more rows than one slice: every old one goes all the same."""
    monkeypatch.setattr(lockouts, "PRUNE_BATCH", 3)
    age = datetime.timedelta(days=settings.LOGIN_RECORDS_DAYS + 1)
    for _ in range(7):
        _aged(AccessFailureLog, age, http_accept="*/*", path_info="/")
    assert lockouts.sign_in_records_prune()["failures"] == 7
    assert not AccessFailureLog.objects.exists()
