"""The deployed shape: gunicorn (deploy/gunicorn.conf.py), a worker and beat on PostgreSQL and
Redis. A record changed through the admin over HTTP reaches the published exports."""

import html.parser
import http.cookiejar
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import global_settings
from django.contrib.auth.models import User

from mica.jobs.models import JobRun, WorkerHeartbeat
from mica.methodology.models import GlossaryTerm
from tests.conftest import WorkerProcess, _test_database_url
from tests.factories import totp_code, totp_device

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


class FormFields(html.parser.HTMLParser):
    """The values a browser would submit from the page's main form."""

    def __init__(self):
        super().__init__()
        self.fields, self._textarea, self._select = {}, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "checkbox", "file"):
            self.fields[name] = attrs.get("value", "")
        elif tag == "input" and name and attrs.get("type") == "checkbox" and "checked" in attrs:
            self.fields[name] = attrs.get("value", "on")
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in attrs:
            self.fields[self._select] = attrs.get("value", "")

    def handle_endtag(self, tag):
        if tag == "textarea":
            # As in a browser: the newline right after <textarea> is not part of the value.
            value = self.fields[self._textarea]
            self.fields[self._textarea] = value[1:] if value.startswith("\n") else value
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data


class Browser:
    """Cookies and CSRF tokens over plain HTTP, like a person at the admin."""

    def __init__(self, base):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def get(self, path):
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.status, response.read().decode()

    def form(self, path):
        parser = FormFields()
        parser.feed(self.get(path)[1])
        return parser.fields

    def post(self, path, fields):
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(
            self.base + path, data=data, headers={"Referer": self.base + path}
        )
        with self.opener.open(request, timeout=30) as response:
            return response.status, response.geturl(), response.read().decode()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout=90, what="the stack"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if result := predicate():
                return result
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"gave up after {timeout} s waiting for {what}")


def lead_signed_in(browser):
    """A superuser with an authenticator, signed in to the admin over HTTP as a person is."""
    lead = User.objects.create_superuser("lead", "lead@example.org", "pw-for-tests-only")
    device = totp_device(lead)
    login = browser.form("/admin/login/")
    login.update(username="lead", password="pw-for-tests-only")
    status, landed, _body = browser.post("/admin/login/?next=/admin/", login)
    # A lead publishes editions: the admin opens after the code of the lead's device.
    step = urllib.parse.urlsplit(landed)
    assert step.path == "/admin/second-factor/", landed
    code = browser.form(f"{step.path}?{step.query}")
    code["code"] = totp_code(device)
    status, landed, _body = browser.post(f"{step.path}?{step.query}", code)
    assert landed.endswith("/admin/"), "the login did not succeed"
    return lead


def glossary_term_edit(browser, term, addition):
    """Add `addition` to the term's English definition through its admin change form."""
    change = f"/admin/methodology/glossaryterm/{term.pk}/change/"
    fields = browser.form(change)
    assert fields.get("definition_en") == term.definition_en, browser.get(change)[1][-3000:]
    fields["definition_en"] = term.definition_en + addition
    fields["_save"] = "Save"
    status, landed, body = browser.post(change, fields)
    assert landed.endswith("/admin/methodology/glossaryterm/"), body[:2000]


@pytest.fixture
def stack(redis_broker, canonical_content, tmp_path):
    port = free_port()
    env = {
        "MICA_EXPORT_DIR": str(tmp_path / "exports"),
        "MICA_EXPORTS_ON_CHANGE": "1",
        "MICA_EXPORT_DEBOUNCE_SECONDS": "2",
        "MICA_WORKER_HEARTBEAT_INTERVAL": "1",
        "MICA_BIND": f"127.0.0.1:{port}",
        "MICA_WEB_WORKERS": "2",
        "MICA_SITE_URL": f"http://127.0.0.1:{port}",
    }
    worker = WorkerProcess(_test_database_url(), tmp_path / "worker.log", **env)
    process_env = {**worker.env}
    logs = open(tmp_path / "stack.log", "w")
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "mica.wsgi"],
        cwd=ROOT,
        env=process_env,
        stdout=logs,
        stderr=subprocess.STDOUT,
    )
    beat = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "mica", "beat", "--loglevel", "INFO"]
        + ["--schedule", str(tmp_path / "beat-schedule")],
        cwd=ROOT,
        env=process_env,
        stdout=logs,
        stderr=subprocess.STDOUT,
    )
    try:
        worker.wait_until_ready()
        yield {"base": f"http://127.0.0.1:{port}", "worker": worker, "log": tmp_path / "stack.log"}
    finally:
        for process in (web, beat):
            process.terminate()
            process.wait(timeout=30)
        worker.stop()


def test_an_admin_edit_over_http_reaches_the_published_exports(stack, settings):
    # gunicorn checks the password with the deployment's own hashers, not the tests' fast one.
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    term = GlossaryTerm.objects.order_by("pk").first()
    browser = Browser(stack["base"])
    wait_for(lambda: browser.get("/healthz")[0] == 200, what="/healthz to answer 200")
    lead_signed_in(browser)
    glossary_term_edit(browser, term, " Edited through the admin.")

    def edit_published():
        status, pack = browser.get("/downloads/mica-methodology.en.md")
        return status == 200 and "Edited through the admin." in pack

    wait_for(edit_published, what="the edit to reach the published English pack")
    # The run that published it ran in the stack's worker (the fixture's own load of the
    # canonical content may have queued one more before the edit).
    assert JobRun.objects.filter(
        job_name="mica.exports.tasks.exports_regenerate",
        state="succeeded",
        worker=stack["worker"].hostname,
    ).exists()
    assert "mica-methodology.en.md" in browser.get("/downloads/")[1]

    # Beat is alive: it keeps sending the heartbeat the worker records.
    seen = WorkerHeartbeat.objects.get(hostname=stack["worker"].hostname).seen_at
    wait_for(
        lambda: WorkerHeartbeat.objects.get(hostname=stack["worker"].hostname).seen_at > seen,
        what="beat's next heartbeat",
    )
