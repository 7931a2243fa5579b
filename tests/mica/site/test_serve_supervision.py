"""The embedded default never falls over with its worker (issue 42, item 8).

The finding: 21 minutes into a load test the embedded `make run` stopped: its worker
crashed and `manage.py serve` took the web server down with it. Here a real `serve` (as
`make run` starts it, on a fresh var/ directory) has its worker killed with SIGKILL while
pages are read: every read answers 200, the command starts the worker again, a job
queued meanwhile is done once it is back, and /healthz/system says what happened.
"""

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import _free_port
from tests.support import fresh_environment, manage, serving, system_health_request, wait_for

pytestmark = pytest.mark.embedded_only

ROOT = Path(__file__).resolve().parents[3]


def _get(url):
    """(status, body) of a GET, an HTTP error's status included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as answer:
        return answer.code, answer.read()


def _worker_pid(serve_pid):
    """The `celery worker` child of the serve command."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            # Celery retitles its processes ("[celeryd: ...]"): the title still names it.
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line for line in status.splitlines() if line.startswith("PPid:"))
        if int(parent.split()[1]) == serve_pid and b"celery" in command:
            return int(entry.name)
    return None


def _group_members(group):
    """The live processes of a process group."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == group:
                    members.append(int(entry.name))
            except ProcessLookupError:
                continue
    return members


def _problems(base):
    return {p["code"]: p for p in json.loads(_get(system_health_request(base))[1])["problems"]}


def test_a_killed_worker_is_started_again_while_every_page_is_served(tmp_path):
    var = tmp_path / "var"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = fresh_environment(
        var,
        MICA_SITE_URL=base,
        MICA_WORKER_HEARTBEAT_INTERVAL="1",
        MICA_EXPORT_DEBOUNCE_SECONDS="1",
        MICA_PAGE_BAKE_ON_CHANGE="0",
    )
    manage(env, "migrate", "--no-input")
    manage(env, "load_canonical_content")
    with serving(env, port, var) as serve:
        first = _worker_pid(serve.pid)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        # A job queued while no worker runs: the export set, as an edit would queue it.
        manage(env, "regenerate_exports")
        statuses = []
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            statuses.append(_get(f"{base}/methodology/")[0])
            time.sleep(0.2)
        assert statuses and set(statuses) == {200}
        assert serve.poll() is None

        def worker_back():
            """the worker started again"""
            pid = _worker_pid(serve.pid)
            return pid is not None and pid != first

        wait_for(worker_back, timeout=60)
        # Nothing of the killed worker lives on: its beat would hold the beat lock.
        assert not _group_members(first)

        def exports_published():
            """the export set queued meanwhile to be published"""
            return _get(f"{base}/downloads/manifest.json")[0] == 200

        wait_for(exports_published, timeout=180)
        restarted = _problems(base)["worker-restarted"]
        assert restarted["message"]["en"].startswith("The worker stopped (exit code -9)")
        assert restarted["message"]["ko"].startswith("워커가 멈췄다가")
        assert _get(f"{base}/healthz")[0] == 200
        assert "the worker stopped (exit code -9)" in (var / "serve.log").read_text()
