"""One settings module, two profiles, chosen by MICA_* environment variables.

Embedded default (nothing set): SQLite under var/, a real Celery worker and beat
(`manage.py serve`, which `make run` starts) on a broker of files under var/broker,
local-memory caches, console e-mail. Under pytest the jobs of this profile run
inline (eager) unless MICA_JOBS_EAGER=0.

Scale-out: MICA_DATABASE_URL switches to PostgreSQL and MICA_REDIS_URL to a
Redis broker and cache with real workers. MICA_SECRET_KEY marks a production
deployment: HTTPS-only cookies, HSTS and the other `check --deploy` settings
follow from it, so a developer can run PostgreSQL and Redis over plain HTTP.
"""

import os
import secrets
import sys
from datetime import timedelta
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from csp.constants import NONCE, NONE, SELF
from django.utils.translation import gettext_lazy as _
from kombu import Queue

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MICA_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env_flag(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def _private_file(path, content=None):
    """`path` readable by its owner only (0600), made with `content` when missing; made
    so from the start, never widened then narrowed, and narrowed if an older release
    left it wider."""
    if content is not None and not path.exists():
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process starting at the same moment made it
        else:
            with os.fdopen(descriptor, "w") as stream:
                stream.write(content)
    if path.exists() and path.stat().st_mode & 0o077:
        path.chmod(0o600)
    return path


def _embedded_secret_key():
    # The embedded profile keeps a generated key beside its database, so a
    # fresh machine never runs on a key that is published in the repository.
    key_file = _private_file(VAR_DIR / "secret_key", secrets.token_urlsafe(50))
    return key_file.read_text().strip()


PRODUCTION = "MICA_SECRET_KEY" in os.environ
SECRET_KEY = os.environ.get("MICA_SECRET_KEY") or _embedded_secret_key()
DEBUG = _env_flag("MICA_DEBUG") and not PRODUCTION
ALLOWED_HOSTS = _env_list("MICA_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
# Reverse proxies (addresses or CIDR networks) whose X-Forwarded-For is believed when
# telling clients apart (mica.clients); with none, every client is its REMOTE_ADDR.
TRUSTED_PROXIES = _env_list("MICA_TRUSTED_PROXIES", [])
# gunicorn bound to a unix socket gives no client address: its peer is the proxy on this
# machine, believed only when this is on (mica.clients). Off, every client would read as
# one, and deploy/gunicorn.conf.py refuses a unix-socket bind.
TRUST_SOCKET_PEER = _env_flag("MICA_TRUST_SOCKET_PEER")
# Pages are indexable only on the configured public production site.
PUBLIC_SITE = _env_flag("MICA_PUBLIC_SITE")

INSTALLED_APPS = [
    "modeltranslation",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.sitemaps",
    "rest_framework",
    # API tokens stored as digests (mica.api_auth.ApiTokenAuthentication); its admin is ours.
    "knox",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "simple_history",
    "django_otp",
    "mica.site.app_configs.SecondFactorConfig",
    "mica.site.app_configs.SignInLockoutsConfig",
    "mica.content",
    "mica.site",
    "mica.jobs",
    "mica.methodology",
    "markets",
    "catalogue",
    "submissions",
    "governance",
    "mica.exports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "mica.site.middleware.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    "mica.site.middleware.AdminStylePolicyMiddleware",
    "mica.site.middleware.AdminLoginNextMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "mica.site.middleware.EnglishPrefixRedirectMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "mica.site.middleware.ApiLanguageMiddleware",
    "mica.site.middleware.NulInputMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "mica.site.staff.AdminSecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "mica.site.middleware.RobotsHeaderMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # The owner's browser is known after a sign-in, and never slowed (mica.site.lockouts).
    "mica.site.lockouts.SignInDeviceMiddleware",
    # Last, as django-axes asks: it turns a sign-in it locked out into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "mica.urls"
WSGI_APPLICATION = "mica.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "mica.site.context_processors.site_shell",
            ],
        },
    },
]

REDIS_URL = os.environ.get("MICA_REDIS_URL")
# The Celery broker may be a Redis of its own: a cache Redis evicts keys under memory
# pressure (allkeys-lru), a broker must never drop a message (noeviction).
BROKER_URL = os.environ.get("MICA_BROKER_URL") or REDIS_URL
# Without a Redis broker, jobs run inline under pytest (ARCHITECTURE, Tests, layer 1) and
# in a worker process of their own everywhere else (see "Cache, broker and jobs").
JOBS_EAGER = not BROKER_URL and _env_flag("MICA_JOBS_EAGER", default="pytest" in sys.modules)

# --- Database -------------------------------------------------------------

DATABASE_URL = os.environ.get("MICA_DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
    # Streaming through a server-side cursor rules out parallel plans; the gate's one pass
    # over every attempt is three times faster on a client-side cursor, read in chunks.
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "mica.sqlite3",
            "OPTIONS": {
                "timeout": 20,
                # Write-ahead logging lets the web processes read while the worker writes.
                "init_command": "PRAGMA journal_mode=WAL;",
                # With a worker beside the web processes, a transaction that read and then
                # writes would fail at once if another wrote in between; taking the write
                # lock at its start makes it wait its turn instead.
                **({} if JOBS_EAGER else {"transaction_mode": "IMMEDIATE"}),
            },
            # A fresh SQLite connection re-reads the schema on its first query, which
            # costs more than serving a cached page; keep each thread's connection.
            "CONN_MAX_AGE": 600,
        }
    }
    # The database holds password hashes and API tokens: its owner's only, as SQLite's
    # journal files follow the database file's mode.
    _private_file(DATABASES["default"]["NAME"], "")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache, broker and jobs -------------------------------------------------

# Intake limits (submissions.throttle) must be one count for every web process and must
# outlive page-cache churn and Redis's memory eviction: a table of their own in the
# database, in every profile, created after migrate.
INTAKE_CACHE = {
    "BACKEND": "mica.caches.CountingDatabaseCache",
    "LOCATION": "mica_intake_cache",
    "OPTIONS": {"MAX_ENTRIES": 100_000},
}
# Attempt recording per account (submissions.throttle.AttemptRecordingThrottle): sandbox
# and dry-run calls count as real ones. DRF's rate form: requests/second|minute|hour|day.
API_ATTEMPT_RATE = os.environ.get("MICA_API_ATTEMPT_RATE", "300/minute")
# A Redis that does not answer is a cache miss, not a server error (mica.caches): pages
# render uncached meanwhile, and short timeouts keep a lost Redis from stalling them.
REDIS_CACHE_OPTIONS = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "mica.caches.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "mica",
            "OPTIONS": REDIS_CACHE_OPTIONS,
        },
        "fragments": {
            "BACKEND": "mica.caches.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "mica-fragments",
            "OPTIONS": REDIS_CACHE_OPTIONS,
        },
        "intake": INTAKE_CACHE,
    }
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "fragments": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "fragments",
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        },
        "intake": INTAKE_CACHE,
    }

# Tasks a page of the catalogue (/tasks/) lists; the rest on pages of their own (?page=N),
# so a page, and the bake after one task's edit, stay the same size as the catalogue grows.
CATALOGUE_PAGE_SIZE = int(os.environ.get("MICA_CATALOGUE_PAGE_SIZE", "100"))

# Public pages are cached whole under the content revision (mica.content.page_cache),
# so a content change is seen at once; the lifetime only bounds what else a page
# shows (today's date, say) and how long entries of old revisions linger. 0: off.
PAGE_CACHE_SECONDS = int(os.environ.get("MICA_PAGE_CACHE_SECONDS", "600"))
# Parts of pages (task rows, methodology chapters) are cached apart, in the "fragments"
# cache, under the revisions of the tables they read (mica.content.fragments): clearing
# or missing the page cache leaves them warm. The lifetime bounds how long entries of
# old revisions linger. 0: off.
FRAGMENT_CACHE_SECONDS = int(os.environ.get("MICA_FRAGMENT_CACHE_SECONDS", "86400"))
# Anonymous public pages baked into files after each content change (mica.site.bake)
# and answered from them in front of Django (mica.site.baked). Each node keeps its own
# copy of the published bake here (mica.content.builds); nothing in it needs to be shared.
PAGE_BAKE_DIR = Path(os.environ.get("MICA_PAGE_BAKE_DIR", VAR_DIR / "pages"))
# Pages the last change affected are rendered live meanwhile, so the delay costs speed
# only, never freshness.
PAGE_BAKE_DEBOUNCE_SECONDS = int(os.environ.get("MICA_PAGE_BAKE_DEBOUNCE_SECONDS", "10"))
# Processes that render a bake: one a core by default.
PAGE_BAKE_PROCESSES = int(os.environ.get("MICA_PAGE_BAKE_PROCESSES", os.cpu_count() or 1))
# A long job reports its progress at most this often (each report writes the run's row).
JOB_PROGRESS_SECONDS = float(os.environ.get("MICA_JOB_PROGRESS_SECONDS", "1"))

# Without Redis the broker is a directory under var/ that every process of the machine
# shares: the web process queues, `manage.py serve`'s worker and beat take.
BROKER_DIR = VAR_DIR / "broker"
CELERY_TASK_ALWAYS_EAGER = JOBS_EAGER
if BROKER_URL:
    CELERY_BROKER_URL = BROKER_URL
elif JOBS_EAGER:
    CELERY_BROKER_URL = "memory://"
else:
    # kombu's filesystem transport, writing each message whole (mica.jobs.broker_files).
    CELERY_BROKER_URL = "mica-files://"
    for _folder in ("queue", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
# A failing job is recorded on its JobRun; it must not turn the request that
# queued it into a server error.
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# A send that cannot reach the broker gives up within about a second: the request that
# queued it has committed its rows and answers; the reaper and the outbox sweep send the
# work when the broker is back (mica.jobs.services.job_runs_reap, submissions.outbox).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# Three queues. "publish": the bake and the exports, one at a time (a worker of its own at
# concurrency 1, solo pool, so the bake may fork its renderers), so publications never
# overlap or finish out of order. "mail": e-mail and the light housekeeping (heartbeats,
# the reaper, the outbox sweep), never stuck behind a long job. "celery": the rest. A
# worker started without -Q consumes all three (manage.py serve, the tests' workers).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = [Queue(name, routing_key=name) for name in ("celery", "publish", "mail")]
CELERY_TASK_ROUTES = {
    "mica.site.tasks.pages_bake_run": {"queue": "publish"},
    "mica.exports.tasks.exports_regenerate": {"queue": "publish"},
    "mica.exports.tasks.full_regeneration": {"queue": "publish"},
    "submissions.tasks.outbox_send": {"queue": "mail"},
    "submissions.tasks.outbox_sweep": {"queue": "mail"},
    "mica.jobs.tasks.worker_heartbeat": {"queue": "mail"},
    "mica.jobs.tasks.job_runs_reap": {"queue": "mail"},
    "mica.site.tasks.sign_in_records_prune": {"queue": "mail"},
}

WORKER_HEARTBEAT_INTERVAL = int(os.environ.get("MICA_WORKER_HEARTBEAT_INTERVAL", "30"))
# Older than this, /healthz/system reports the workers as down.
WORKER_HEARTBEAT_MAX_AGE = int(os.environ.get("MICA_WORKER_HEARTBEAT_MAX_AGE", "120"))
# Who reads /healthz/system's problems besides signed-in staff: a monitor sending
# `Authorization: Bearer <this>`. Unset, anonymous callers get the overall status only.
MONITORING_TOKEN = os.environ.get("MICA_MONITORING_TOKEN", "")
# How often a running job run proves it is alive (a thread beside the work).
JOB_HEARTBEAT_SECONDS = int(os.environ.get("MICA_JOB_HEARTBEAT_SECONDS", "10"))
# A running job run silent this long (four of its heartbeats missed) has lost its worker:
# the reaper, every JOB_REAP_INTERVAL, fails it and queues it again, so a job whose worker
# died is retried within JOB_SILENT_SECONDS + JOB_REAP_INTERVAL, under a minute.
JOB_SILENT_SECONDS = int(os.environ.get("MICA_JOB_SILENT_SECONDS", "40"))
# A queued run not started this long after it was due is taken for lost and sent again;
# it never keeps a debounced request from queueing another for longer.
JOB_START_GRACE_SECONDS = int(os.environ.get("MICA_JOB_START_GRACE_SECONDS", "60"))
# How many fresh runs the reaper queues, one after another, for a job whose worker died.
JOB_REAP_RETRIES = int(os.environ.get("MICA_JOB_REAP_RETRIES", "2"))
JOB_REAP_INTERVAL = int(os.environ.get("MICA_JOB_REAP_INTERVAL", "15"))
# Outbox messages still pending this long after they were written are sent again.
OUTBOX_SWEEP_INTERVAL = int(os.environ.get("MICA_OUTBOX_SWEEP_INTERVAL", "60"))
OUTBOX_SWEEP_AFTER_SECONDS = int(os.environ.get("MICA_OUTBOX_SWEEP_AFTER_SECONDS", "60"))
# One beat for the whole system: a beat sends the schedule only while it holds a lease
# in the database, renewed at every tick; another beat waits until it expires.
CELERY_BEAT_SCHEDULER = "mica.jobs.beat:LeasedScheduler"
BEAT_LEASE_SECONDS = int(os.environ.get("MICA_BEAT_LEASE_SECONDS", "60"))
CELERY_BEAT_SCHEDULE = {
    "worker-heartbeat": {
        "task": "mica.jobs.tasks.worker_heartbeat",
        "schedule": float(WORKER_HEARTBEAT_INTERVAL),
    },
    "job-runs-reap": {
        "task": "mica.jobs.tasks.job_runs_reap",
        "schedule": float(JOB_REAP_INTERVAL),
    },
    "outbox-sweep": {
        "task": "submissions.tasks.outbox_sweep",
        "schedule": float(OUTBOX_SWEEP_INTERVAL),
    },
    "sign-in-records-prune": {
        "task": "mica.site.tasks.sign_in_records_prune",
        "schedule": 3600.0,
    },
    "daily-page-bake": {
        "task": "mica.site.tasks.daily_bake",
        "schedule": crontab(hour=0, minute=1),
    },
    "nightly-full-regeneration": {
        "task": "mica.exports.tasks.nightly",
        "schedule": crontab(hour=int(os.environ.get("MICA_NIGHTLY_HOUR_UTC", "2")), minute=30),
    },
}
# A message a killed worker had taken goes back to the queue after this many
# seconds; keep it longer than the longest job (a full regeneration: minutes).
BROKER_VISIBILITY_TIMEOUT = int(os.environ.get("MICA_BROKER_VISIBILITY_TIMEOUT", "3600"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": BROKER_VISIBILITY_TIMEOUT,
    # Redis looks for such messages every interval × throttle seconds (kombu's 100 by
    # default); a timeout shorter than that (the tests' five seconds) is looked for as
    # often as it can expire.
    "unacked_restore_interval": min(10, max(1, BROKER_VISIBILITY_TIMEOUT // 5)),
    "unacked_restore_throttle": 10 if BROKER_VISIBILITY_TIMEOUT >= 100 else 1,
}
if CELERY_BROKER_URL in ("mica-files://", "filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS.update(
        data_folder_in=str(BROKER_DIR / "queue"),
        data_folder_out=str(BROKER_DIR / "queue"),
        control_folder=str(BROKER_DIR / "control"),
    )
    # The files broker keeps an exchange's bindings in the memory of the process that
    # declared them, so a web process would route a job to a queue nobody reads; its one
    # worker (manage.py serve) takes every job from the default queue instead.
    CELERY_TASK_ROUTES = {}
# Where beat keeps the last run of each schedule entry (the nightly run, say).
BEAT_SCHEDULE_FILE = VAR_DIR / "beat-schedule"

# --- Exports ----------------------------------------------------------------

# Where this node writes export sets and keeps its copy of the published one
# (mica.content.builds).
EXPORT_DIR = Path(os.environ.get("MICA_EXPORT_DIR", VAR_DIR / "exports"))
# A burst of edits within this many seconds yields one regeneration.
EXPORT_DEBOUNCE_SECONDS = int(os.environ.get("MICA_EXPORT_DEBOUNCE_SECONDS", "20"))
# With a worker, every content change queues a regeneration; where jobs run inline (the
# test suite's embedded layer) a change would block its request for seconds instead.
EXPORTS_ON_CHANGE = _env_flag("MICA_EXPORTS_ON_CHANGE", default=not JOBS_EAGER)
# The same for the baked pages.
PAGE_BAKE_ON_CHANGE = _env_flag("MICA_PAGE_BAKE_ON_CHANGE", default=not JOBS_EAGER)

# --- E-mail -----------------------------------------------------------------

if os.environ.get("MICA_EMAIL_URL"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# Where links in e-mails point (the public address of the site).
SITE_URL = os.environ.get("MICA_SITE_URL", "http://127.0.0.1:8000").rstrip("/")
DEFAULT_FROM_EMAIL = os.environ.get("MICA_DEFAULT_FROM_EMAIL", "portal@mica.invalid")

# --- Languages --------------------------------------------------------------

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("ko", _("Korean"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
USE_TZ = True
TIME_ZONE = "UTC"

MODELTRANSLATION_DEFAULT_LANGUAGE = "en"
MODELTRANSLATION_LANGUAGES = tuple(code for code, _name in LANGUAGES)
MODELTRANSLATION_FALLBACK_LANGUAGES = {"default": ("en",)}

# --- Static files -----------------------------------------------------------

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("MICA_STATIC_ROOT", VAR_DIR / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
# The manual: docs/ built by MkDocs (`make docs`, which `make run` runs) into this folder,
# served at /docs/ (English) and /docs/ko/ (Korean) by mica.site.manual. A release's
# manual, like its static files, is built on each web node from the code.
# Built with the release (`make docs`), beside the code and not in MICA_VAR_DIR: a node
# started with an empty var directory serves the manual too.
DOCS_DIR = Path(os.environ.get("MICA_DOCS_DIR", BASE_DIR / "build" / "manual"))
# Published builds (the export sets, the baked pages): immutable files in an object store
# that every node reaches, published by a pointer in the database (mica.content.builds).
# With MICA_S3_BUCKET, S3-compatible storage (credentials from AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY, as boto3 reads them); without, a directory under var/ that only
# this machine sees: the embedded default, one node.
S3_BUCKET = os.environ.get("MICA_S3_BUCKET", "")
if S3_BUCKET:
    BUILD_STORE = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": os.environ.get("MICA_S3_ENDPOINT_URL") or None,
            "region_name": os.environ.get("MICA_S3_REGION") or None,
            "location": os.environ.get("MICA_S3_PREFIX", "mica"),
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": True,  # objects are named by their digest: same name, same bytes
        },
    }
else:
    BUILD_STORE = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": Path(os.environ.get("MICA_BUILD_STORE_DIR", VAR_DIR / "store"))},
    }
# Every folder named above exists from the start, so that a first migrate, bake or
# regeneration on a fresh deployment finds its place.
_LOCAL_STORE = [] if S3_BUCKET else [BUILD_STORE["OPTIONS"]["location"]]
for _folder in (EXPORT_DIR, PAGE_BAKE_DIR, *_LOCAL_STORE):
    try:
        Path(_folder).mkdir(parents=True, exist_ok=True)
    except OSError:
        # Not a reason to refuse to start: what needs the folder fails there, naming it,
        # and a job retries and then reports it (/healthz/system), as a worker must.
        pass
# The key that authenticates each backup's manifest (mica.site.backup): a restore refuses
# a backup it did not sign. Set it in production, the same on every machine that backs up
# or restores, and keep a copy apart from the backups. Unset in the embedded profile, the
# key is var/backup_key (0600, made by the first backup), never inside a backup.
BACKUP_KEY = os.environ.get("MICA_BACKUP_KEY", "")
BACKUP_KEY_FILE = None if PRODUCTION else VAR_DIR / "backup_key"
# The Ed25519 key that signs the publication log and each export set's manifest
# (mica.signing): PEM, or base64 of its raw 32 bytes. Set it in production, the same on every
# node, and keep a copy apart from the backups; `check --deploy` refuses production without
# it. Unset in the embedded profile, the key is var/signing_key (0600, made on first use).
SIGNING_KEY = os.environ.get("MICA_SIGNING_KEY", "")
SIGNING_KEY_FILE = None if PRODUCTION else VAR_DIR / "signing_key"
# How many web nodes serve the site: more than one needs the object store (a startup
# check refuses node-local builds then).
WEB_NODES = int(os.environ.get("MICA_WEB_NODES", "1"))
STORAGES = {
    "builds": BUILD_STORE,
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Outside production whitenoise serves straight from the source folders, so the
# embedded profile needs no collectstatic step.
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = DEBUG

# --- API --------------------------------------------------------------------

# Django's own bound (2.5 MB), stated: it bounds every API body too (mica.parsers).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# A batch of attempts is judged and stored in one transaction within one request: its
# size is bounded so that the answer always comes well inside the web server's timeout.
ATTEMPT_BATCH_MAX = int(os.environ.get("MICA_ATTEMPT_BATCH_MAX", "1000"))

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON only, with bounded depth and key length; form parsers would bypass the bounds.
    "DEFAULT_PARSER_CLASSES": ["mica.parsers.BoundedJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "mica.pagination.Pagination",
    "EXCEPTION_HANDLER": "mica.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mica.api_auth.ApiTokenAuthentication",
        "mica.site.staff.SecondFactorSessionAuthentication",
        "mica.site.staff.LockoutBasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
}
# An API token is shown once, when a verified superuser issues it in the admin; the
# database keeps its digest and its first characters only. It lasts until revoked, or
# until the expiry given when it was issued.
REST_KNOX = {"TOKEN_TTL": None, "AUTH_HEADER_PREFIX": "Token"}
SPECTACULAR_SETTINGS = {
    "TITLE": "MICA portal API",
    "DESCRIPTION": (
        "Read access to the records of MICA, the Multinational Index of Consumer "
        "Agents. Every human-readable field is given in English and Korean."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # One name per vocabulary, whichever field uses it.
    "ENUM_NAME_OVERRIDES": {
        "EvidenceTypeEnum": "mica.vocabulary.EvidenceType",
        "SurfaceEnum": "mica.vocabulary.Surface",
        "AuthorizationBoundaryEnum": "mica.vocabulary.AuthorizationBoundary",
        "RecoveryConditionEnum": "mica.vocabulary.RecoveryCondition",
        "TaskFamilyEnum": "mica.vocabulary.TaskFamily",
    },
}

# --- Staff sign-in ------------------------------------------------------------

# django-axes watches every password sign-in (the admin login, HTTP Basic auth on the
# API) and refuses a username from a client address after this many failures in a row,
# even with the right password, for the cool-off or until an administrator unlocks it
# in the admin ("Sign-in lockouts"). Token auth is not a password and is not counted.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("MICA_LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("MICA_LOGIN_COOLOFF_MINUTES", "60")))
# Per username and address together: one abuser cannot lock a real user out elsewhere.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "mica.site.clients.client_address"
AXES_USERNAME_CALLABLE = "mica.site.staff.lockout_username"
AXES_LOCKOUT_CALLABLE = "mica.site.lockouts.lockout_response"
AXES_HANDLER = "mica.site.lockouts.LockoutHandler"
# Guessing one username from many addresses (mica.site.lockouts): past this many failed
# sign-ins within the cool-off, from every address together, each further attempt waits
# twice as long as the one before, up to the delay below; the addresses the account
# signed in from, and the browser it signed in with (a signed cookie), are never slowed.
LOGIN_USERNAME_CEILING = int(os.environ.get("MICA_LOGIN_USERNAME_CEILING", "30"))
LOGIN_USERNAME_MAX_DELAY = int(os.environ.get("MICA_LOGIN_USERNAME_MAX_DELAY_SECONDS", "300"))
# Sign-in failures and successful sign-ins are kept this long, then pruned by beat with
# the lockouts past their cool-off.
LOGIN_RECORDS_DAYS = int(os.environ.get("MICA_LOGIN_RECORDS_DAYS", "30"))
AXES_ENABLE_ACCESS_FAILURE_LOG = True
# mica.site.admin shows the records under labels of our own.
AXES_ENABLE_ADMIN = False
AXES_VERBOSE = False
# Accounts that see holdout tasks or publish an edition confirm a TOTP code before the
# admin opens (mica.site.staff.second_factor_required).
OTP_TOTP_ISSUER = "MICA portal"
OTP_ADMIN_HIDE_SENSITIVE_DATA = True
# Enrolling a device takes a one-time code that another administrator issued (or
# `manage.py issue_enrolment_code` on the server), valid for this many minutes.
SECOND_FACTOR_ENROLMENT_MINUTES = int(os.environ.get("MICA_ENROLMENT_CODE_MINUTES", "30"))

# --- Security ---------------------------------------------------------------

# The only sign-in is the admin's: without a `next` of its own (or with one that leads
# off the site or nowhere, mica.site.middleware.AdminLoginNextMiddleware), it lands there.
LOGIN_REDIRECT_URL = "admin:index"
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = _env_flag("MICA_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = 31536000
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # The load balancer's health probe and monitors ask over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^healthz/system$"]
CSRF_TRUSTED_ORIGINS = _env_list("MICA_CSRF_TRUSTED_ORIGINS", [])
# No inline script anywhere: every script is a file under static/. A nonce is added
# only where a page asks for request.csp_nonce (the self-contained 500 page's styles);
# public pages are cached whole, so they never use one. The admin alone also allows
# inline styles (mica.site.middleware.AdminStylePolicyMiddleware).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, NONCE],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MICA_LOG_LEVEL", "WARNING")},
}

# Every app that owns canonical content registers its loader here, in the order
# they must run (later content refers to earlier records).
CANONICAL_CONTENT_LOADERS = [
    ("methodology", "mica.methodology.content_loader.load"),
    ("markets", "markets.content_loader.load"),
    ("catalogue", "catalogue.content_loader.load"),
    ("governance", "governance.content_loader.load"),
]
# And a dumper that writes the records back in the shape its loader reads
# (manage.py dump_canonical_content); its module's CONTENT_DIR is where it writes by default.
CANONICAL_CONTENT_DUMPERS = [
    ("methodology", "mica.methodology.content_dump.dump"),
    ("markets", "markets.content_dump.dump"),
    ("catalogue", "catalogue.content_dump.dump"),
    ("governance", "governance.content_dump.dump"),
]
