"""Client addresses behind a unix socket (issue 33, item 7), on a real gunicorn started with
deploy/gunicorn.conf.py and spoken to over AF_UNIX as nginx would.

Finding: "With gunicorn bound to a unix socket, REMOTE_ADDR is empty and every client
reads as one." Acceptance: "behind a unix socket two clients have separate intake
counts"; a TCP bind keeps using REMOTE_ADDR; without MICA_TRUST_SOCKET_PEER the unix bind
is refused at start.

The node shares the test's database: on PostgreSQL the test database itself, on SQLite a
copy of the in-memory one. Its requests file empty challenges, refused (400) after the
intake limit has counted them, so they store nothing but the counts."""

import http.client
import os
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from submissions import throttle
from tests.conftest import _test_database_url

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
URL = "/api/v1/challenges/"


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a unix socket, as a reverse proxy on the same machine speaks it."""

    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def node_environment(folder, **overrides):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(MICA_VAR_DIR=str(folder), MICA_WEB_WORKERS="1", **overrides)
    if connection.vendor == "postgresql":
        env["MICA_DATABASE_URL"] = _test_database_url()
    return env


def database_copied(folder):
    """On SQLite the node reads a copy of the test's in-memory database (where it looks
    for one under MICA_VAR_DIR)."""
    if connection.vendor != "sqlite":
        return
    connection.ensure_connection()
    copy = sqlite3.connect(folder / "mica.sqlite3")
    with copy:
        connection.connection.backup(copy)
    copy.close()


def gunicorn(folder, *binds, env):
    arguments = [arg for bind in binds for arg in ("--bind", bind)]
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", *arguments]
        + ["mica.wsgi"],
        cwd=ROOT,
        env=env,
        stdout=open(folder / "gunicorn.log", "w"),
        stderr=subprocess.STDOUT,
    )


def post(conn, forwarded=None):
    headers = {"Content-Type": "application/json", "Host": "localhost"}
    if forwarded:
        headers["X-Forwarded-For"] = forwarded
    conn.request("POST", URL, body=b"{}", headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status


def wait_until_serving(process, connect, log, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            conn = connect()
            conn.request("GET", "/healthz", headers={"Host": "localhost"})
            if conn.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"gunicorn did not serve: {log.read_text()[-3000:]}")


@pytest.fixture
def folder():
    # A unix socket's path has a short limit (108 bytes): not under pytest's tmp_path.
    with tempfile.TemporaryDirectory(prefix="mica-") as name:
        yield Path(name)


@pytest.mark.vendor
def test_behind_a_unix_socket_two_clients_count_apart(folder):
    """One gunicorn bound to a unix socket (peer trusted) and to TCP: over the socket each
    forwarded client has its own intake count; over TCP, from an address that is no
    trusted proxy, X-Forwarded-For is ignored and the sender is its REMOTE_ADDR."""
    database_copied(folder)
    sock, port = str(folder / "web.sock"), free_port()
    env = node_environment(folder, MICA_TRUST_SOCKET_PEER="1", MICA_TRUSTED_PROXIES="")
    process = gunicorn(folder, f"unix:{sock}", f"127.0.0.1:{port}", env=env)
    try:
        wait_until_serving(process, lambda: UnixHTTPConnection(sock), folder / "gunicorn.log")
        # Issue 44: "The unix socket is created srwxrwxrwx: create it 0660".
        assert stat.filemode(os.stat(sock).st_mode) == "srw-rw----"
        limit = throttle.LIMITS["address"]
        # Addresses of this run only: a count left by an earlier run cannot interfere.
        first, second = (f"2001:db8:{uuid.uuid4().hex[:4]}:{n}::1" for n in (1, 2))
        over_socket = UnixHTTPConnection(sock)
        flood = [post(over_socket, forwarded=first) for _ in range(limit + 1)]
        assert flood == [400] * limit + [429], flood
        assert post(over_socket, forwarded=second) == 400
        # Over TCP every forwarded address is one sender, 127.0.0.1 (which other tests'
        # nodes may have counted already): the limit holds whatever the header says.
        over_tcp = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        statuses = [post(over_tcp, forwarded=f"192.0.2.{n}") for n in range(limit + 1)]
        assert set(statuses) <= {400, 429} and statuses[-1] == 429, statuses
        assert post(over_tcp, forwarded="198.51.100.77") == 429
        assert post(over_socket, forwarded=f"2001:db8:{uuid.uuid4().hex[:4]}::1") == 400
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.vendor
def test_a_unix_socket_bind_without_a_trusted_peer_is_refused_at_start(folder):
    """Or refuse that bind at start, with a clear message: the node never serves."""
    sock = folder / "web.sock"
    started = subprocess.run(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py"]
        + ["--bind", f"unix:{sock}", "mica.wsgi"],
        cwd=ROOT,
        env=node_environment(folder),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode != 0
    output = started.stdout + started.stderr
    assert f"bound to the unix socket {sock}" in output and "MICA_TRUST_SOCKET_PEER=1" in output
