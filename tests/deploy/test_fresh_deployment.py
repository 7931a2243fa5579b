"""A fresh deployment migrates (issue 33, item 8): `migrate` on an empty PostgreSQL database
with the example environment (deploy/mica.env.example), its folders not made yet, as an
operator runs it once per release from one machine. It used to abort half-way, leaving
PostgreSQL half-migrated, when an after-commit step of a data migration failed."""

import os
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.conftest import ObjectStore
from tests.support import require

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
PATHS = ("MICA_EXPORT_DIR", "MICA_PAGE_BAKE_DIR", "MICA_STATIC_ROOT", "MICA_VAR_DIR")


def example_environment():
    """The variables deploy/mica.env.example sets, as `set -a; . mica.env` reads them."""
    variables = {}
    for line in (ROOT / "deploy" / "mica.env.example").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            variables[name.strip()] = value.strip()
    return variables


def _server_url(database):
    parts = urlsplit(os.environ["MICA_DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{database}"))


def _psql(sql):
    with psycopg.connect(_server_url("postgres"), autocommit=True) as connection:
        connection.execute(sql)


@pytest.fixture
def fresh_database():
    require(os.environ.get("MICA_DATABASE_URL"), "MICA_DATABASE_URL is not set: no PostgreSQL")
    name = f"mica_fresh_{secrets.token_hex(4)}"
    _psql(f'CREATE DATABASE "{name}"')
    try:
        yield _server_url(name)
    finally:
        _psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_migrate_succeeds_on_a_fresh_deployment_laid_out_like_the_example(
    fresh_database, object_store, tmp_path
):
    store, bucket = object_store
    example = example_environment()
    assert set(PATHS) <= set(example)
    # The example's own addresses, this machine's services in their place; its paths under
    # a temporary root, none of them made yet.
    environment = {
        **example,
        "MICA_DATABASE_URL": fresh_database,
        "MICA_REDIS_URL": os.environ.get("MICA_REDIS_URL", "redis://127.0.0.1:6379/0"),
        "MICA_BROKER_URL": os.environ.get("MICA_REDIS_URL", "redis://127.0.0.1:6379/0"),
        "MICA_S3_BUCKET": bucket,
        "MICA_S3_ENDPOINT_URL": store.endpoint,
        "MICA_S3_PREFIX": f"fresh-{secrets.token_hex(4)}",
        **ObjectStore.ACCESS,
        **{name: str(tmp_path / example[name].lstrip("/")) for name in PATHS},
    }
    assert not [name for name in PATHS if Path(environment[name]).exists()]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MICA_", "AWS_"))}
    base.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)

    def manage(*arguments):
        return subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env={**base, **environment},
            capture_output=True,
            text=True,
            timeout=600,
        )

    migrated = manage("migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stdout[-3000:] + migrated.stderr[-3000:]
    assert "Traceback" not in migrated.stderr
    check = manage("migrate", "--check")
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]
    # Every folder the settings name was made at start, not by the first job that needs it.
    for name in PATHS:
        assert Path(environment[name]).is_dir(), name
