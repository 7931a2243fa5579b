"""Health in two parts: the node's own, for a load balancer, and the system's, for people.

`/healthz` answers for the web node that serves it: its database and the published bake
and export set as this node reads them, and its cache as a degradation only (a node
without it still serves). A load balancer takes a node out only when that node cannot
serve; a dead worker, a failing job or a lost broker
leaves every node serving the pages it has, so none of them fails it.

`/healthz/system` and the admin's banner report what the whole deployment needs to
keep publishing: a worker that beats, jobs that finish, a bake that follows the
content, a published export set, a broker that answers and a worker on each of its
queues. Each problem has a code for machines and a sentence in English and Korean;
anonymous callers get the overall status only (health_details_allowed).
"""

import datetime
import hmac
import json
import threading
import time
import traceback
from dataclasses import dataclass, field

import redis
from celery import current_app as celery_app
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from mica.content.revision import NO_REVISION, revisions_read
from mica.exports.selectors import export_current
from mica.jobs.models import JobRun, JobState
from mica.jobs.selectors import job_title, worker_heartbeat_age_seconds
from mica.jobs.workflows import job_run_transition
from mica.site.bake import MANIFEST, bake_current, bake_root
from mica.site.bake_layers import layer_directory, layers_below
from mica.text import lazy_format

# A job's failure is news for a day, unless a later run of the same job succeeded.
FAILED_WITHIN = datetime.timedelta(hours=24)
# Longer than any job takes (a full bake or regeneration: minutes).
RUNNING_STUCK_AFTER = datetime.timedelta(minutes=30)
# Far past any countdown a run is queued with (debounce and retry: seconds).
QUEUED_STUCK_AFTER = datetime.timedelta(minutes=10)
# A content change the published bake does not show may wait this long for the next
# bake (its debounce, the bake itself, a queue ahead of it); longer is an alarm.
BAKE_BEHIND_AFTER = datetime.timedelta(minutes=15)
# How long the admin's banner reuses a report: every admin page shows it.
BANNER_SECONDS = 5.0
# A broker or worker that does not answer within this long counts as absent.
PROBE_TIMEOUT_SECONDS = 1.0
# kombu's Redis transport keeps a queue's messages of each priority step in a list
# named after the queue, the steps above 0 with this separator and the step.
PRIORITY_SEPARATOR, PRIORITY_STEPS = "\x06\x16", (0, 3, 6, 9)
# The job name under which a failed after-commit step of a content write is recorded
# (mica.content.changes): a failed run of its own, shown under "Background jobs".
AFTER_COMMIT_JOB = "content-committed"


class Unhealthy(Exception):
    """A component answered, but not well enough."""


def _check(probe):
    try:
        return {"ok": True, **(probe() or {})}
    except Unhealthy as exc:
        return {"ok": False, "error": str(exc)}
    except Exception as exc:  # a health probe reports any failure, it never raises
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}


# --- The node -----------------------------------------------------------------


def _database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return {"vendor": connection.vendor}


def _cache():
    # mica.caches answers a miss for a Redis that does not answer: a value stored and
    # read back is what tells a reachable cache.
    cache.set("mica:healthz", "1", 10)
    if cache.get("mica:healthz") != "1":
        raise Unhealthy("cache did not return what was stored")
    return {"backend": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]}


def _bake_manifest(directory):
    return json.loads((directory / MANIFEST).read_text(encoding="utf-8"))


def _bake():
    directory = bake_current()
    if directory is None:
        # Nothing baked yet: Django renders every page, which this node can do.
        return {"published": False}
    manifest = _bake_manifest(directory)
    below = layers_below(manifest)
    for name in below:  # a layer below gone, and the bake cannot be read whole
        layer_directory(bake_root(), name)
    # A layered bake's top layer lists its own pages and counts them all.
    pages = manifest.get("total", len(manifest["pages"]))
    return {"published": True, "pages": pages, "layers": 1 + len(below)}


def _exports():
    _directory, manifest = export_current()
    if manifest is None:
        # The downloads page says that no set is published; the system report names it.
        return {"published": False}
    return {"published": True, "files": len(manifest.get("files", ()))}


# What a node needs to serve readers. The cache only spares work: without it every page,
# filing and save is still served (mica.caches answers a miss), so an unreachable cache
# is a degradation named in the answer, never a reason for a load balancer to take
# every node out at once.
NEEDED_TO_SERVE = ("database", "bake", "exports")


def node_health():
    """(healthy, report) of this web node: whether it can serve readers."""
    checks = {
        "database": _check(_database),
        "cache": _check(_cache),
        "bake": _check(_bake),
        "exports": _check(_exports),
    }
    healthy = all(checks[name]["ok"] for name in NEEDED_TO_SERVE)
    degraded = [name for name, check in checks.items() if not check["ok"]]
    status = "unavailable" if not healthy else "degraded" if degraded else "ok"
    report = {"status": status, "checks": checks}
    if healthy and degraded:
        report["degraded"] = degraded
    return healthy, report


# --- The system ---------------------------------------------------------------


@dataclass
class Problem:
    """One thing wrong with the deployment: a code, and its sentence in any language."""

    code: str
    message: object  # lazy: read in the language active where it is shown
    details: dict = field(default_factory=dict)

    def as_json(self):
        sentences = {}
        for language, _name in settings.LANGUAGES:
            with translation.override(language):
                sentences[language] = str(self.message)
        return {"code": self.code, "message": sentences, **self.details}


def _broker_mode():
    url = settings.CELERY_BROKER_URL
    if settings.JOBS_EAGER or url.startswith("memory://"):
        return "eager"
    if url.startswith(("redis://", "rediss://", "unix://")):
        return "redis"
    return "filesystem"


def _broker_client():
    return redis.Redis.from_url(
        settings.CELERY_BROKER_URL,
        socket_timeout=PROBE_TIMEOUT_SECONDS,
        socket_connect_timeout=PROBE_TIMEOUT_SECONDS,
    )


def _broker_problems(mode):
    """The broker unreachable, or a Redis queue holding messages that no worker takes."""
    if mode == "filesystem":
        queue = settings.BROKER_DIR / "queue"
        if not queue.is_dir():
            return [_broker_unreachable(f"the broker's queue {queue} is missing")]
        return []
    if mode != "redis":
        return []
    try:
        waiting = _redis_queue_lengths(_broker_client())
    except redis.RedisError as exc:
        return [_broker_unreachable(f"{type(exc).__name__}: {exc}"[:300])]
    waiting = {queue: count for queue, count in waiting.items() if count}
    if not waiting:
        return []
    consumed = _queues_consumed()
    return [
        Problem(
            "queue-without-worker",
            lazy_format(
                _(
                    "The queue “%(queue)s” holds %(count)d waiting messages and no worker "
                    "takes from it: the jobs in it do not run."
                ),
                queue=queue,
                count=count,
            ),
            {"queue": queue, "messages": count},
        )
        for queue, count in sorted(waiting.items())
        if queue not in consumed
    ]


def _broker_unreachable(error):
    return Problem(
        "broker-unreachable",
        _("The job broker does not answer: no background job can be queued or taken."),
        {"error": error},
    )


def _queue_names():
    """The default queue and every queue the routes and queue settings name."""
    conf = celery_app.conf
    names = {conf.task_default_queue or "celery"}
    for queue in conf.task_queues or ():
        names.add(getattr(queue, "name", queue))
    routes = conf.task_routes or {}
    for route in routes.values() if isinstance(routes, dict) else ():
        if isinstance(route, dict) and route.get("queue"):
            names.add(getattr(route["queue"], "name", route["queue"]))
    return sorted(str(name) for name in names)


def _redis_queue_lengths(client):
    with client.pipeline(transaction=False) as pipe:
        names = _queue_names()
        for name in names:
            for step in PRIORITY_STEPS:
                pipe.llen(f"{name}{PRIORITY_SEPARATOR}{step}" if step else name)
        lengths = pipe.execute()
    steps = len(PRIORITY_STEPS)
    return {name: sum(lengths[i * steps : (i + 1) * steps]) for i, name in enumerate(names)}


def _queues_consumed():
    """The queues some worker that answers through this node's broker takes from.

    Asked through the broker itself, not the heartbeat in the database: a web node
    configured with another Redis than the workers' sees its queues fill with no
    worker, while the heartbeat, from elsewhere, says all is well.
    """
    try:
        # A connection of its own, closed at once: a pooled one would stay in the process
        # waiting on its reply queue, and a process forked later (the bake's renderers)
        # would hang closing it.
        with celery_app.connection_for_write() as connection:
            inspect = celery_app.control.inspect(
                timeout=PROBE_TIMEOUT_SECONDS, connection=connection
            )
            replies = inspect.active_queues()
    except Exception:  # no answer is the answer: nobody consumes
        return set()
    return {queue["name"] for queues in (replies or {}).values() for queue in queues or ()}


def _worker_problems(mode):
    if mode == "eager":
        return []  # jobs run inside the process that queues them: no worker to lose
    age = worker_heartbeat_age_seconds()
    if age is None:
        return [
            Problem(
                "worker-missing",
                _(
                    "No worker has ever reported a heartbeat: background jobs (bakes, "
                    "export regenerations, e-mails) do not run."
                ),
            )
        ]
    if age > settings.WORKER_HEARTBEAT_MAX_AGE:
        return [
            Problem(
                "worker-stale",
                lazy_format(
                    _(
                        "The last worker heartbeat came %(age)d seconds ago, more than "
                        "%(limit)d: background jobs (bakes, export regenerations, e-mails) "
                        "do not run."
                    ),
                    age=int(age),
                    limit=settings.WORKER_HEARTBEAT_MAX_AGE,
                ),
                {"last_heartbeat_age_seconds": round(age, 1)},
            )
        ]
    return []


def after_commit_failure_record(sender, error, tables, **kwargs):
    """Record a failed after-commit step (content_committed_failed) as a failed run, so
    that /healthz/system and the admin's banner report it; the client got its answer."""
    run = JobRun.objects.create(job_name=AFTER_COMMIT_JOB, arguments={"tables": sorted(tables)})
    job_run_transition(
        job_run_id=run.pk,
        action="fail",
        message=_("A change was saved, but the step after its commit failed."),
        error="".join(traceback.format_exception(error))[-4000:],
    )


def _after_commit_problems(now):
    latest = (
        JobRun.objects.filter(
            job_name=AFTER_COMMIT_JOB,
            state=JobState.FAILED,
            finished_at__gte=now - FAILED_WITHIN,
        )
        .order_by("-finished_at")
        .values_list("pk", "finished_at")
        .first()
    )
    if latest is None:
        return []
    pk, finished_at = latest
    return [
        Problem(
            "after-commit-failed",
            lazy_format(
                _(
                    "A change was saved, but the step after its commit failed (#%(run)d): "
                    "pages and exports may not show it until the next change. See the log."
                ),
                run=pk,
            ),
            {"run": pk, "finished_at": finished_at.isoformat()},
        )
    ]


def _job_problems(now):
    problems = []
    later_success = JobRun.objects.filter(
        job_name=OuterRef("job_name"),
        state=JobState.SUCCEEDED,
        finished_at__gt=OuterRef("finished_at"),
    )
    failed = (
        JobRun.objects.filter(state=JobState.FAILED, finished_at__gte=now - FAILED_WITHIN)
        .exclude(job_name=AFTER_COMMIT_JOB)
        .exclude(Exists(later_success))
        .order_by("job_name", "-finished_at")
        .values_list("pk", "job_name", "finished_at")
    )
    seen = set()
    for pk, job_name, finished_at in failed:
        if job_name in seen:
            continue  # the job's latest failure speaks for it
        seen.add(job_name)
        problems.append(
            Problem(
                "job-failed",
                lazy_format(
                    _("The latest run of the job “%(job)s” (#%(run)d) failed."),
                    job=job_title(job_name),
                    run=pk,
                ),
                {"job": job_name, "run": pk, "finished_at": finished_at.isoformat()},
            )
        )
    stuck = JobRun.objects.filter(
        state=JobState.RUNNING, started_at__lt=now - RUNNING_STUCK_AFTER
    ) | JobRun.objects.filter(
        Q(due_at__lt=now - QUEUED_STUCK_AFTER)
        | Q(due_at__isnull=True, queued_at__lt=now - QUEUED_STUCK_AFTER),
        state=JobState.QUEUED,
    )
    fields = ("pk", "job_name", "state", "queued_at", "due_at", "started_at")
    for run in stuck.order_by("pk").only(*fields):
        details = {"job": run.job_name, "run": run.pk}
        if run.state == JobState.RUNNING:
            minutes = int((now - run.started_at).total_seconds() // 60)
            message = _(
                "The job “%(job)s” (#%(run)d) has been running for %(minutes)d minutes "
                "without finishing: its worker may be gone."
            )
            code = "job-stuck-running"
        else:
            # A debounced or backing-off run is not due before its time.
            minutes = int((now - (run.due_at or run.queued_at)).total_seconds() // 60)
            message = _(
                "The job “%(job)s” (#%(run)d) has waited in the queue for %(minutes)d "
                "minutes: no worker took it."
            )
            code = "job-stuck-queued"
        problems.append(
            Problem(
                code,
                lazy_format(message, job=job_title(run.job_name), run=run.pk, minutes=minutes),
                {**details, "minutes": minutes},
            )
        )
    return problems


def _bake_problems(now):
    directory = bake_current()
    if directory is None:
        return [
            Problem(
                "bake-missing",
                _("No page bake is published: Django renders every public page."),
            )
        ]
    try:
        manifest = _bake_manifest(directory)
        baked = {table: tuple(value) for table, value in manifest["revisions"].items()}
        valid_until = float(manifest["valid_until"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [
            Problem(
                "bake-unreadable",
                _("The published page bake cannot be read: Django renders every public page."),
                {"error": f"{type(exc).__name__}: {exc}"[:300]},
            )
        ]
    problems = []
    if time.time() - valid_until > BAKE_BEHIND_AFTER.total_seconds():
        problems.append(
            Problem(
                "bake-outdated",
                _(
                    "The published page bake was made on an earlier day and no bake "
                    "followed it: Django renders every public page."
                ),
            )
        )
    # The latest move of each table the bake did not see. The oldest of them is the
    # latest a change left unbaked can have been made: past the bound, the bake after
    # it is certainly late.
    revisions = revisions_read()
    unbaked = [
        changed_at
        for table, (number, changed_at) in revisions.items()
        if baked.get(table, (NO_REVISION[0], NO_REVISION[1].isoformat()))
        != (number, changed_at.isoformat())
    ]
    if unbaked and now - min(unbaked) > BAKE_BEHIND_AFTER:
        minutes = int((now - min(unbaked)).total_seconds() // 60)
        problems.append(
            Problem(
                "bake-stale",
                lazy_format(
                    _(
                        "The published page bake has not followed a content change made "
                        "%(minutes)d minutes ago: the changed pages are rendered by Django "
                        "until a bake is published."
                    ),
                    minutes=minutes,
                ),
                {"minutes": minutes},
            )
        )
    return problems


def _export_problems():
    _directory, manifest = export_current()
    if manifest is None:
        return [
            Problem(
                "exports-missing",
                _("No export set is published: the downloads page offers no files."),
            )
        ]
    return []


def _cache_problems():
    check = _check(_cache)
    if check["ok"]:
        return []
    return [
        Problem(
            "cache-unreachable",
            _(
                "The cache does not answer: every page is still served, rendered without "
                "it and more slowly, until it is back."
            ),
            {"error": check["error"]},
        )
    ]


# `manage.py serve` (the embedded profile) notes here each time it starts its worker again.
WORKER_RESTARTS = "worker-restarts.json"
# A restart is news for this long.
RESTARTED_WITHIN = datetime.timedelta(hours=1)


def worker_restart_record(exit_code):
    """Note that the embedded worker died (with `exit_code`) and is being started again."""
    path = settings.VAR_DIR / WORKER_RESTARTS
    try:
        count = json.loads(path.read_text(encoding="utf-8"))["count"]
    except (OSError, ValueError, KeyError):
        count = 0
    record = {"count": count + 1, "at": timezone.now().isoformat(), "exit_code": exit_code}
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record), encoding="utf-8")
    partial.replace(path)


def _restart_problems(now):
    try:
        record = json.loads((settings.VAR_DIR / WORKER_RESTARTS).read_text(encoding="utf-8"))
        at = datetime.datetime.fromisoformat(record["at"])
    except (OSError, ValueError, KeyError):
        return []
    if now - at > RESTARTED_WITHIN:
        return []
    minutes = int((now - at).total_seconds() // 60)
    return [
        Problem(
            "worker-restarted",
            lazy_format(
                _(
                    "The worker stopped (exit code %(code)s) and was started again "
                    "%(minutes)d minutes ago; pages were served throughout. Its log says why."
                ),
                code=record.get("exit_code"),
                minutes=minutes,
            ),
            {"restarts": record.get("count"), "at": record["at"]},
        )
    ]


def system_problems():
    """Every problem of the deployment, found now."""
    now = timezone.now()
    mode = _broker_mode()
    problems = _cache_problems() + _restart_problems(now)
    problems += _broker_problems(mode) + _worker_problems(mode)
    problems += _job_problems(now) + _after_commit_problems(now)
    problems += _bake_problems(now) + _export_problems()
    return problems


def health_details_allowed(request):
    """Staff signed in, or a monitor sending `Authorization: Bearer MICA_MONITORING_TOKEN`."""
    if request.user.is_authenticated and request.user.is_staff:
        return True
    token = settings.MONITORING_TOKEN
    sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    return bool(token) and hmac.compare_digest(sent.encode(), token.encode())


def system_health():
    """(healthy, report) of the deployment as a whole; refreshes the banner's copy."""
    problems = _check_problems()
    with _remembering:
        _remembered.update(at=time.monotonic(), problems=problems)
    report = {
        "status": "ok" if not problems else "problems",
        "broker": _broker_mode(),
        "problems": [problem.as_json() for problem in problems],
    }
    return not problems, report


def _check_problems():
    try:
        return system_problems()
    except Exception as exc:  # the database itself, most likely: say so, never raise
        return [
            Problem(
                "system-unreadable",
                _("The state of the system cannot be read: the database may be unreachable."),
                {"error": f"{type(exc).__name__}: {exc}"[:300]},
            )
        ]


_remembered = {"at": None, "problems": []}
_remembering = threading.Lock()


def system_problems_recent():
    """The problems as found at most BANNER_SECONDS ago in this process: each admin page
    shows them, and a few seconds' delay costs nothing against their queries."""
    with _remembering:
        at = _remembered["at"]
        if at is None or time.monotonic() - at > BANNER_SECONDS:
            _remembered.update(at=time.monotonic(), problems=_check_problems())
        return _remembered["problems"]


def system_problems_forget():
    """The next banner finds the problems afresh."""
    with _remembering:
        _remembered["at"] = None
