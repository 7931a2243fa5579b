"""Redis down is not a 500 (issue 31, item 6): with the page cache and the fragments on a
Redis that does not answer, readers and filers are still served, uncached.

No mocks: the caches point at a real closed port, where every connection is refused."""

import time

import pytest
import redis
from django.test import override_settings

from submissions.models import Challenge
from tests.support import require

pytestmark = pytest.mark.django_db

CLOSED_PORT = "redis://127.0.0.1:1/0"
TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}


def caches_at(backend):
    """The page cache and the fragments on a Redis at a closed port, as the scale-out
    profile configures them; the intake limits keep their database table."""
    from django.conf import settings

    return override_settings(
        CACHES={
            **settings.CACHES,
            "default": {"BACKEND": backend, "LOCATION": CLOSED_PORT, "OPTIONS": TIMEOUTS},
            "fragments": {
                "BACKEND": backend,
                "LOCATION": CLOSED_PORT,
                "KEY_PREFIX": "mica-fragments",
                "OPTIONS": TIMEOUTS,
            },
        }
    )


PAGES = ["/", "/tasks/", "/ko/methodology/", "/markets/kr/", "/submit/challenge/"]


def test_djangos_redis_cache_turns_a_lost_redis_into_a_server_error(
    client, canonical_content, page_cache, fragments
):
    """The fault: every cached page raised while Redis was down."""
    with caches_at("django.core.cache.backends.redis.RedisCache"):
        with pytest.raises(redis.ConnectionError):
            client.get("/tasks/")


def test_pages_render_uncached_while_redis_is_down(
    client, canonical_content, page_cache, fragments
):
    with caches_at("mica.caches.ResilientRedisCache"):
        for path in PAGES:
            started = time.monotonic()
            response = client.get(path)
            assert response.status_code == 200, path
            assert time.monotonic() - started < 10, f"{path} stalled on the lost cache"
        # Still answered afresh, with its validators, on the next request.
        again = client.get("/tasks/")
        assert again.status_code == 200 and again["ETag"]
        assert client.get("/tasks/", HTTP_IF_NONE_MATCH=again["ETag"]).status_code == 304


def test_a_challenge_is_filed_while_redis_is_down(client, canonical_content, page_cache):
    form = {
        "section_id": "world-first-claim",
        "challenge_type": "editorial",
        "what_is_wrong": "Typo.",
        "proposed_replacement": "Fix it.",
        "contact_email": "a@example.org",
        "idempotency_key": "redis-down-1",
    }
    with caches_at("mica.caches.ResilientRedisCache"):
        assert client.post("/submit/challenge/", form).status_code == 302
        assert client.get("/ko/submit/system/").status_code == 200
    assert Challenge.objects.count() == 1


def test_the_lost_cache_misses_drops_writes_and_counts_as_absent(caplog):
    from django.core.cache import caches

    with caches_at("mica.caches.ResilientRedisCache"):
        store = caches["default"]
        assert store.get("key", "fallback") == "fallback"
        assert store.set("key", "value") is None
        assert store.add("key", "value") is False
        assert store.get_many(["a", "b"]) == {}
        assert store.set_many({"a": 1}) == []
        assert store.has_key("key") is False
        assert store.delete("key") is False
        assert store.get_or_set("key", "computed") == "computed"
        with pytest.raises(ValueError):
            store.incr("key")
        # Once failed, Redis is left alone for a short spell rather than asked again.
        assert store.unreachable()
    warnings = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(warnings) == 1, "one warning a spell, not one a call"


@pytest.mark.broker
def test_a_reachable_redis_cache_works_as_djangos(settings):
    """With MICA_REDIS_URL (the Redis layer) the same backend is a cache."""
    from django.core.cache import caches

    require(settings.REDIS_URL, "MICA_REDIS_URL is not set: no Redis to cache in")
    store = caches["default"]
    assert settings.CACHES["default"]["BACKEND"] == "mica.caches.ResilientRedisCache"
    store.set("mica-test:resilient", "kept", 30)
    assert store.get("mica-test:resilient") == "kept"
    assert not store.unreachable()
    store.delete("mica-test:resilient")


def test_staff_sign_in_while_redis_is_down(client, canonical_content):
    """Sessions and sign-in lockouts (django-axes) live in the database, not the cache."""
    from tests.factories import PASSWORD, StaffFactory

    StaffFactory(username="clerk")
    with caches_at("mica.caches.ResilientRedisCache"):
        response = client.post(
            "/admin/login/?next=/admin/",
            {"username": "clerk", "password": PASSWORD, "next": "/admin/"},
        )
        assert response.status_code == 302 and response["Location"].endswith("/admin/")
        assert client.get("/admin/").status_code == 200


@pytest.mark.django_db
def test_the_intake_cache_culls_the_oldest_entries_of_every_family_alike():
    """Issue 33, item 9: "the intake cache culls fairly (no key family evicted before
    another)": Django's database cache culls the keys that sort first, so every address
    count went before any e-mail count did."""
    from django.core.cache import caches

    from mica.caches import CountingDatabaseCache
    from submissions.throttle import CACHE_ALIAS

    settings_of_intake = caches[CACHE_ALIAS]
    store = CountingDatabaseCache(
        settings_of_intake._table, {"OPTIONS": {"MAX_ENTRIES": 20, "CULL_FREQUENCY": 2}}
    )
    store.clear()
    written = []
    for number in range(40):  # a filing a second: its address and its e-mail counted
        for family in ("address", "email"):
            key = f"intake:{family}:{number:04d}"
            store.set(key, number, 3600 + number)
            written.append(key)
    kept = [key for key in written if store.get(key) is not None]
    assert kept
    assert len(kept) <= 21
    families = {key.split(":")[1] for key in kept}
    assert families == {"address", "email"}
    # What is kept is the newest, of both families.
    assert kept == written[-len(kept) :]
