"""Intake limits in a store of their own: per client address and per contact e-mail.

Documented limits: 20 filings an hour from one address, 10 an hour for one e-mail.
A flood beyond them is refused (429) before anything is stored.

The counts live in the "intake" cache (a database table on the embedded default,
Redis under its own prefix in the scale-out profile), never in the page cache, so
every web process sees one count and page-cache churn cannot reset it. The address
is the client's as mica.clients tells it (trusted proxies only), so one flooding
address never blocks another; an IPv6 client counts by its /64 network, which one
subscriber holds whole (mica.clients.address_counted, as sign-in lockouts do). E-mail
addresses count in a normal form, so plus-addressing or Gmail dots do not multiply the
limit.
"""

import hashlib

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import UserRateThrottle

from mica.clients import address_counted

WINDOW_SECONDS = 3600
# Part of every key; tests give each test its own, so no test inherits another's counts.
NAMESPACE = "intake"
LIMITS = {"address": 20, "email": 10}
CACHE_ALIAS = "intake"
# Providers where dots in the local part do not tell mailboxes apart.
DOTLESS_DOMAINS = {"gmail.com", "googlemail.com"}


def email_normalised(email):
    """One form per mailbox: lower case, no `+tag`, and no dots for Gmail."""
    email = (email or "").strip().lower()
    local, at, domain = email.rpartition("@")
    if not at:
        return email
    local = local.partition("+")[0]
    if domain in DOTLESS_DOMAINS:
        local = local.replace(".", "")
        domain = "gmail.com"
    return f"{local}@{domain}"


def _key(kind, value):
    digest = hashlib.sha256(value.encode()).hexdigest()[:32]
    return f"{NAMESPACE}:{kind}:{digest}"


def _count(store, key):
    store.add(key, 0, WINDOW_SECONDS)
    try:
        return store.incr(key)
    except ValueError:  # expired between add and incr
        store.add(key, 1, WINDOW_SECONDS)
        return 1


def intake_allowed(*, address, email):
    """Count this filing; False when either limit is already reached."""
    store = caches[CACHE_ALIAS]
    counted = [("address", address_counted(address))]
    if email_normalised(email):
        counted.append(("email", email_normalised(email)))
    for kind, value in counted:
        if _count(store, _key(kind, value)) > LIMITS[kind]:
            return False
    return True


class AttemptRecordingThrottle(UserRateThrottle):
    """Every POST to the attempts endpoint counts against its token's account: sandbox
    and dry-run calls as real ones, since they do the same work (MICA_API_ATTEMPT_RATE,
    in the intake store like the filings' limits)."""

    scope = "attempts"

    def __init__(self):
        self.cache = caches[CACHE_ALIAS]
        super().__init__()

    def get_rate(self):
        return settings.API_ATTEMPT_RATE

    def get_cache_key(self, request, view):
        return f"{NAMESPACE}:{super().get_cache_key(request, view)}"
