"""Both settings profiles, read in a fresh interpreter as a deployment would."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each probe reads the settings in a fresh interpreter with an environment of its own.
pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, django
django.setup()
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "eager": settings.CELERY_TASK_ALWAYS_EAGER,
    "broker": settings.CELERY_BROKER_URL,
    "cache": settings.CACHES["default"]["BACKEND"],
    "cache_location": settings.CACHES["default"].get("LOCATION"),
    "email": settings.EMAIL_BACKEND,
    "public": settings.PUBLIC_SITE,
    "hosts": settings.ALLOWED_HOSTS,
    "debug": settings.DEBUG,
}))
"""
PRODUCTION_ENV = {
    "MICA_DATABASE_URL": "postgres://mica@db.internal:5432/mica",
    "MICA_REDIS_URL": "redis://cache.internal:6379/0",
    "MICA_SECRET_KEY": "k3-" + "x7Qp9vLm2Zr8Wt4Yn6Bc1Hd5Jf0Gs3Ka" * 2,
    # An Ed25519 private key (base64 of its 32 bytes), as `check --deploy` asks of production.
    "MICA_SIGNING_KEY": "rCBz5fzNx1trhjhNZb2tTBQ8usEjdu10UOaCQjHS63c=",
    "MICA_ALLOWED_HOSTS": "mica.example.org",
    "MICA_PUBLIC_SITE": "1",
}


def _clean_env(tmp_path, **extra):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MICA_") and k != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env.update(DJANGO_SETTINGS_MODULE="mica.settings", MICA_VAR_DIR=str(tmp_path), **extra)
    return env


def _probe(env):
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_embedded_default_needs_nothing(tmp_path):
    config = _probe(_clean_env(tmp_path))
    assert config["engine"] == "django.db.backends.sqlite3"
    # A real worker and beat (manage.py serve) take jobs from a broker of files under var/.
    assert config["eager"] is False
    assert config["broker"] == "mica-files://"
    assert (tmp_path / "broker" / "queue").is_dir()
    assert config["cache"].endswith("LocMemCache")
    assert config["email"].endswith("console.EmailBackend")
    assert config["public"] is False
    # The embedded profile made its own secret key under its var directory.
    assert len((tmp_path / "secret_key").read_text()) >= 50


def test_jobs_can_run_inline_on_the_embedded_default(tmp_path):
    config = _probe(_clean_env(tmp_path, MICA_JOBS_EAGER="1"))
    assert config["eager"] is True
    assert config["broker"] == "memory://"


def test_production_profile_uses_postgres_and_redis(tmp_path):
    config = _probe(_clean_env(tmp_path, **PRODUCTION_ENV))
    assert config["engine"] == "django.db.backends.postgresql"
    assert config["eager"] is False
    assert config["broker"] == PRODUCTION_ENV["MICA_REDIS_URL"]
    assert config["cache"].endswith("RedisCache")
    assert config["public"] is True
    assert config["hosts"] == ["mica.example.org"]
    assert config["debug"] is False
    assert not (tmp_path / "secret_key").exists()


def test_the_broker_can_be_a_redis_apart_from_the_caches(tmp_path):
    """A cache Redis evicts keys under memory pressure; a broker must never drop one."""
    broker = "redis://broker.internal:6379/0"
    config = _probe(_clean_env(tmp_path, **PRODUCTION_ENV, MICA_BROKER_URL=broker))
    assert config["broker"] == broker
    assert config["cache_location"] == PRODUCTION_ENV["MICA_REDIS_URL"]
    assert config["cache"] == "mica.caches.ResilientRedisCache"
    assert config["eager"] is False


def test_production_profile_passes_the_deploy_check(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_clean_env(tmp_path, **PRODUCTION_ENV),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_embedded_default_is_not_deployable(tmp_path):
    # The deploy check must see the difference: without the production
    # variables the HTTPS settings are off and it says so.
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_clean_env(tmp_path),
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "SECURE_SSL_REDIRECT" in result.stdout + result.stderr
