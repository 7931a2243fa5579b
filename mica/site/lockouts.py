"""Sign-in lockouts that hold against guessing spread over many addresses.

django-axes refuses a username from one client after MICA_LOGIN_FAILURE_LIMIT failed
sign-ins (mica.site.staff); the client is its address as mica.clients counts it, so an
IPv6 client is its whole /64 (mica.site.clients). What stepping through addresses would
still allow is slowed per username here, without ever locking the owner out:

- past LOGIN_USERNAME_CEILING failed sign-ins for one username within the cool-off, from
  every address together, each further attempt waits twice as long after the last
  failure as the one before (1 s, 2 s, 4 s ... LOGIN_USERNAME_MAX_DELAY at most), and an
  attempt that comes sooner is refused before its password is checked, so it is not a
  guess and does not count;
- the addresses the account signed in from within LOGIN_RECORDS_DAYS are never slowed,
  nor is the owner's own browser: each successful sign-in sets a signed device cookie
  naming the account (DEVICE_COOKIE), which others' guesses cannot forge; from anywhere
  else the right password works once the wait is over.

Failure records per username are bounded (FAILURES_KEPT_PER_USERNAME: beyond them the
wait is at its ceiling anyway), and beat prunes the rest (sign_in_records_prune).
"""

import math
from datetime import timedelta

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.core import signing
from django.db.models import Count, Max
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from rest_framework import exceptions
from rest_framework.request import Request

from mica.site.staff import lockout_response as address_lockout_response

PRUNE_BATCH = 5000
DEVICE_COOKIE = "mica_sign_in_device"
DEVICE_SALT = "mica.site.lockouts.device"
DEVICE_ACCOUNTS = 5  # accounts one browser is known for: a shared desk has a few


def failures_kept_per_username():
    """Enough failures to reach the longest wait (the ceiling, then a doubling per
    failure up to LOGIN_USERNAME_MAX_DELAY); older ones change no wait."""
    doublings = math.ceil(math.log2(max(settings.LOGIN_USERNAME_MAX_DELAY, 1)))
    return settings.LOGIN_USERNAME_CEILING + doublings + 1


def device_accounts(request):
    """The accounts this browser signed in as within LOGIN_RECORDS_DAYS, from its signed
    cookie; none when it is missing, stale or forged."""
    value = request.COOKIES.get(DEVICE_COOKIE)
    if not value:
        return []
    max_age = timedelta(days=settings.LOGIN_RECORDS_DAYS)
    try:
        accounts = signing.loads(value, salt=DEVICE_SALT, max_age=max_age)
    except signing.BadSignature:
        return []
    return accounts if isinstance(accounts, list) else []


def device_cookie_set(request, response):
    """After a successful sign-in (mark_device), the browser is known for that account."""
    username = getattr(request, "sign_in_device", None)
    if not username:
        return response
    accounts = [username] + [a for a in device_accounts(request) if a != username]
    response.set_cookie(
        DEVICE_COOKIE,
        signing.dumps(accounts[:DEVICE_ACCOUNTS], salt=DEVICE_SALT),
        max_age=settings.LOGIN_RECORDS_DAYS * 86400,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


class SignInDeviceMiddleware:
    """Sets the device cookie on the answer to a successful sign-in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return device_cookie_set(request, self.get_response(request))


def slowed_message(seconds):
    return ngettext(
        "Too many failed sign-ins for this account lately. Try again in %(seconds)d second; "
        "the addresses you have signed in from before are not slowed.",
        "Too many failed sign-ins for this account lately. Try again in %(seconds)d "
        "seconds; the addresses you have signed in from before are not slowed.",
        seconds,
    ) % {"seconds": seconds}


class SignInSlowed(exceptions.Throttled):
    """The API's answer to an attempt inside the per-username wait: 429 with Retry-After."""

    default_code = "sign-in-slowed"


def _known_address(username, address, now):
    """Whether the account signed in from this address (as counted) within the records
    kept: its owner's own places are never slowed."""
    if address is None:
        return False
    since = now - timedelta(days=settings.LOGIN_RECORDS_DAYS)
    return AccessLog.objects.filter(
        username=username, ip_address=address, attempt_time__gte=since
    ).exists()


def _owners_own(request, username, now):
    """The owner's own browser or one of their addresses: never slowed by others' guesses."""
    own_browser = username in device_accounts(request)
    return own_browser or _known_address(username, request.axes_ip_address, now)


def username_wait_seconds(request, credentials=None):
    """Seconds this sign-in must still wait under the per-username ceiling; 0: none."""
    username = get_client_username(request, credentials)
    if not username:
        return 0
    now = request.axes_attempt_time
    # Failures that reached the password check: those of a pair already locked out were
    # refused before it and guess nothing.
    guesses = AccessFailureLog.objects.filter(
        username=username, locked_out=False, attempt_time__gte=now - get_cool_off(request)
    ).aggregate(count=Count("id"), last=Max("attempt_time"))
    beyond = guesses["count"] - settings.LOGIN_USERNAME_CEILING
    if beyond < 0 or _owners_own(request, username, now):
        return 0
    delay = min(2**beyond, settings.LOGIN_USERNAME_MAX_DELAY)
    remaining = (guesses["last"] + timedelta(seconds=delay) - now).total_seconds()
    return math.ceil(remaining) if remaining > 0 else 0


class LockoutHandler(AxesDatabaseHandler):
    """AXES_HANDLER: axes' own records and lockouts, plus the per-username wait."""

    def is_allowed(self, request, credentials=None):
        if not super().is_allowed(request, credentials):
            return False
        if self.is_whitelisted(request, credentials):
            return True
        wait = username_wait_seconds(request, credentials)
        if not wait:
            return True
        if isinstance(request, Request):
            # HTTP Basic auth on the API: DRF answers 429 with the wait itself.
            raise SignInSlowed(wait=wait, detail=slowed_message(wait))
        request.sign_in_wait_seconds = wait
        # The admin's login then answers with the page of lockout_response below.
        request.axes_locked_out = True
        request.axes_credentials = credentials
        return False

    def user_login_failed(self, sender, credentials, request=None, **kwargs):
        if getattr(request, "sign_in_wait_seconds", 0):
            # Refused before the password was checked: not a guess, and not a failure of
            # this address either.
            return
        super().user_login_failed(sender, credentials, request, **kwargs)
        username = get_client_username(request, credentials)
        if username:
            _failures_bound(username)

    def user_logged_in(self, sender, request, user, **kwargs):
        super().user_logged_in(sender, request, user, **kwargs)
        if request is not None:
            request.sign_in_device = user.get_username()


def _failures_bound(username):
    """Keep a username's newest failures only: guessing cannot grow the table without end."""
    for locked_out in (False, True):  # guesses, and attempts an address lockout refused
        kept = AccessFailureLog.objects.filter(username=username, locked_out=locked_out)
        kept = kept.order_by("-attempt_time").values_list("pk", flat=True)
        stale = list(kept[failures_kept_per_username() :])
        if stale:
            AccessFailureLog.objects.filter(pk__in=stale).delete()


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the wait's own page (429, Retry-After), or the lockout's."""
    wait = getattr(request, "sign_in_wait_seconds", 0)
    if not wait:
        return address_lockout_response(request, original_response, credentials)
    response = render(
        request,
        "admin/sign_in_slowed.html",
        {
            "title": _("Sign-in slowed"),
            "message": slowed_message(wait),
            "site_header": _("MICA portal administration"),
            "site_title": _("MICA portal"),
            "has_permission": False,
            "is_nav_sidebar_enabled": False,
        },
        status=429,
    )
    response["Retry-After"] = str(wait)
    return response


def _delete_in_batches(queryset):
    """Delete in slices, so a table grown large is never loaded whole (AccessAttempt's
    deletion runs axes' signals a row at a time)."""
    deleted = 0
    while pks := list(queryset.values_list("pk", flat=True)[:PRUNE_BATCH]):
        queryset.model.objects.filter(pk__in=pks).delete()
        deleted += len(pks)
    return deleted


def sign_in_records_prune(now=None):
    """Delete what no rule reads any more: attempts past the cool-off (axes counts only
    newer ones) and failures and sign-ins older than LOGIN_RECORDS_DAYS. Returns the
    number of rows deleted from each table."""
    now = now or timezone.now()
    kept_since = now - timedelta(days=settings.LOGIN_RECORDS_DAYS)
    return {
        "attempts": _delete_in_batches(
            AccessAttempt.objects.filter(attempt_time__lt=now - settings.AXES_COOLOFF_TIME)
        ),
        "failures": _delete_in_batches(
            AccessFailureLog.objects.filter(attempt_time__lt=kept_since)
        ),
        "sign_ins": _delete_in_batches(AccessLog.objects.filter(attempt_time__lt=kept_since)),
    }
