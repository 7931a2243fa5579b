"""What /healthz reports: each component the portal depends on, checked live."""

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from mica.jobs.selectors import worker_heartbeat_age_seconds


class Unhealthy(Exception):
    """A component answered, but not well enough."""


def _check(probe):
    try:
        return {"ok": True, **(probe() or {})}
    except Unhealthy as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # a health probe reports any failure, it never raises
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


def _database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"vendor": connection.vendor}


def _cache():
    cache.set("mica:healthz", "1", 10)
    if cache.get("mica:healthz") != "1":
        raise Unhealthy("cache did not return what was stored")
    return {"backend": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]}


def _broker_mode():
    if settings.REDIS_URL:
        return "redis"
    return "eager" if settings.JOBS_EAGER else "filesystem"


def _broker():
    mode = _broker_mode()
    if mode == "redis":
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2
        )
        client.ping()
    elif mode == "filesystem":
        queue = settings.BROKER_DIR / "queue"
        if not queue.is_dir():
            raise Unhealthy(f"the broker's queue {queue} is missing")
    return {"mode": mode}


def _worker():
    mode = _broker_mode()
    if mode == "eager":
        # Jobs run inside the process that queues them: there is no worker to lose.
        return {"mode": mode}
    age = worker_heartbeat_age_seconds()
    if age is None:
        raise Unhealthy("no worker has ever reported a heartbeat")
    if age > settings.WORKER_HEARTBEAT_MAX_AGE:
        raise Unhealthy(
            f"last heartbeat {age:.0f} s ago, older than {settings.WORKER_HEARTBEAT_MAX_AGE} s"
        )
    return {"mode": mode, "last_heartbeat_age_seconds": round(age, 1)}


def health_report():
    checks = {
        "database": _check(_database),
        "cache": _check(_cache),
        "broker": _check(_broker),
    }
    # The heartbeat lives in the database: without it the age is unknowable.
    checks["worker"] = (
        _check(_worker)
        if checks["database"]["ok"]
        else {"ok": False, "error": "database unavailable"}
    )
    healthy = all(check["ok"] for check in checks.values())
    return healthy, {"status": "ok" if healthy else "unavailable", "checks": checks}
