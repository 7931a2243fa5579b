"""Helpers the test modules share (fixtures live in the conftest files)."""

import os
from contextlib import contextmanager

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(condition, reason):
    """Skip (locally) or fail (in CI) when a real component is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI needs this component: {reason}", pytrace=False)
    pytest.skip(reason)


def fields_missing_korean(app_label):
    """Every translated field of an app's records that has English but no Korean."""
    from modeltranslation.translator import translator

    missing = []
    for model in translator.get_registered_models():
        if model._meta.app_label != app_label:
            continue
        fields = translator.get_options_for_model(model).fields
        for record in model.objects.all():
            for name in fields:
                if getattr(record, f"{name}_en") and not getattr(record, f"{name}_ko"):
                    missing.append(f"{model.__name__}#{record.pk}.{name}")
    return missing


def wait_for(predicate, timeout=60, interval=0.1):
    """Poll until `predicate()` is truthy; its docstring says what was awaited on timeout."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := predicate():
            return result
        time.sleep(interval)
    raise AssertionError(f"gave up after {timeout} s waiting for {predicate.__doc__}")


def job_run_finished(job_run):
    from mica.jobs.models import JobState

    def check():
        """the job run to finish"""
        job_run.refresh_from_db()
        return job_run.state in (JobState.SUCCEEDED, JobState.FAILED)

    return check


def crawl(client, starts, limit=600):
    """Every page and API response reachable from the starts through links and API urls:
    {path: body} of those answering 200."""
    import re
    from urllib.parse import urlsplit

    from django.conf import settings

    site = re.escape(settings.SITE_URL)
    seen, queue, bodies = set(), list(starts), {}
    while queue:
        path = queue.pop()
        if path in seen or len(seen) > limit:
            continue
        seen.add(path)
        response = client.get(path)
        if response.status_code != 200:
            continue
        # Files served as they are (the manual) stream; a binary one reads as replaced text.
        content = b"".join(response.streaming_content) if response.streaming else response.content
        body = content.decode(errors="replace")
        bodies[path] = body
        links = (
            re.findall(r'href="(/[^"#]*)"', body)
            + [
                urlsplit(u).path + (f"?{urlsplit(u).query}" if urlsplit(u).query else "")
                # Pages and the API root name the site URL; API pages link the host asked.
                for u in re.findall(rf'"((?:http://testserver|{site})/[^"]*)"', body)
            ]
            + [urlsplit(u).path for u in re.findall(r"<loc>([^<]+)</loc>", body)]
        )
        for link in links:
            if link.startswith(("/static/", "/admin/", "/ko/admin/")):
                continue
            if "/tasks/" in link and link.count("/") > 3 and not link.startswith("/api/"):
                # Task pages are many; their links lead nowhere new beyond the first few.
                if sum(1 for s in seen if "/tasks/" in s) > 40:
                    continue
            queue.append(link.replace("&amp;", "&"))
    return bodies


def database_flush():
    """Empty every table of the test database, as pytest-django's transactional tests do
    when they end (TransactionTestCase._fixture_teardown)."""
    from django.core.management import call_command
    from django.db import DEFAULT_DB_ALIAS

    call_command(
        "flush",
        verbosity=0,
        interactive=False,
        database=DEFAULT_DB_ALIAS,
        reset_sequences=False,
        allow_cascade=False,
        inhibit_post_migrate=False,
    )


# --- A deployment of the embedded default in processes of its own ------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fresh_environment(var, **settings):
    """This process's environment without the test's MICA_ settings, for a site whose
    var/ is `var`, with `settings` added: what a fresh clone's `make run` would see, and
    the monitoring token the tests read /healthz/system's problems with."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("MICA_") and key != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env.update(MICA_VAR_DIR=str(var), MICA_MONITORING_TOKEN=MONITORING_TOKEN, **settings)
    return env


# What a monitor sends to read /healthz/system's problems (settings.MONITORING_TOKEN);
# tests/conftest.py sets it for the suite.
MONITORING_TOKEN = "test-monitoring-token"
MONITOR = {"HTTP_AUTHORIZATION": f"Bearer {MONITORING_TOKEN}"}


def system_health_request(base):
    """A request for `base`'s /healthz/system, as a monitor with the token sends it."""
    import urllib.request

    return urllib.request.Request(
        f"{base}/healthz/system", headers={"Authorization": f"Bearer {MONITORING_TOKEN}"}
    )


def manage(env, *arguments):
    """`manage.py ARGUMENTS` in a process of its own under `env`: its output."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    ).stdout


@contextmanager
def serving(env, port, var):
    """`manage.py serve` (its process) running until the block ends, once it serves and
    its worker beats; its output in var/serve.log."""
    import subprocess
    import sys

    log = open(os.path.join(var, "serve.log"), "w")  # noqa: SIM115 (the process writes it)
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"

    def ready():
        """/healthz and the embedded worker's heartbeat"""
        return serves_with_a_worker(base)

    try:
        wait_for(ready, timeout=120)
        yield serve
    finally:
        serve.terminate()
        serve.wait(timeout=60)
        log.close()


def serves_with_a_worker(base):
    """The node serves (/healthz), and the system names no worker problem: /healthz
    answers for the node alone, the worker is the system's (/healthz/system)."""
    import json
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=5) as response:
            if response.status != 200:
                return False
    except OSError:  # not listening yet, or an HTTP error
        return False
    try:
        with urllib.request.urlopen(system_health_request(base), timeout=5) as response:
            system = json.load(response)
    except urllib.error.HTTPError as answer:  # 503 with the problems, worker or other
        system = json.load(answer)
    except OSError:
        return False
    return not {"worker-missing", "worker-stale"} & {p["code"] for p in system["problems"]}
