"""Intake limits in the shared cache: per client address and per contact e-mail.

Documented limits: 20 filings an hour from one address, 10 an hour for one e-mail.
A flood beyond them is refused (429) before anything is stored.
"""

import hashlib

from django.core.cache import cache

WINDOW_SECONDS = 3600
# Part of every key; tests give each test its own, so no test inherits another's counts.
NAMESPACE = "intake"
LIMITS = {"address": 20, "email": 10}


def _key(kind, value):
    digest = hashlib.sha256(value.strip().lower().encode()).hexdigest()[:32]
    return f"mica:{NAMESPACE}:{kind}:{digest}"


def intake_allowed(*, address, email):
    """Count this filing; False when either limit is already reached."""
    for kind, value in (("address", address or "unknown"), ("email", email or "")):
        if kind == "email" and not value:
            continue
        key = _key(kind, value)
        cache.add(key, 0, WINDOW_SECONDS)
        try:
            count = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, WINDOW_SECONDS)
            count = 1
        if count > LIMITS[kind]:
            return False
    return True


def client_address(request):
    return request.META.get("REMOTE_ADDR", "unknown")
