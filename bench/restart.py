"""`make run` started, stopped and started again with nothing changed in between: the
seconds from each start to the first page answered, and what the second start did.

    .venv/bin/python bench/restart.py [--port PORT]

In a temporary var directory (the embedded default: SQLite, the file broker), as an
operator restarts the portal: the first start migrates, loads the canonical content,
publishes the exports and the bake and serves; the second finds all of it current.
Target (issue 34, item 10): the second start serves its first page within 15 s, and
publishes neither a new export set nor a new bake. The port is a free one unless named.

It has one size, which is its smoke run (CI). With BENCH_PREPARED (bench/prepared.py)
the var directory starts as a copy of a migrated and loaded one, so the first start
finds the database ready and its seconds say so; the second start is the same either way.
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from prepared import prepared_copy

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 15


def first_page_seconds(env, port):
    """Start `make run`, return (seconds to the first 200 on /, the process)."""
    started = time.monotonic()
    process = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    while time.monotonic() - started < 600:
        if process.poll() is not None:
            sys.exit(f"make run stopped:\n{process.stdout.read()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:
                if answer.status == 200:
                    return time.monotonic() - started, process
        except OSError:
            time.sleep(0.2)
    sys.exit("make run served no page in 600 s")


def stop(process):
    os.killpg(process.pid, signal.SIGTERM)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    return output


def published_builds(env):
    """Every build published so far, as "kind name" (a name starts with the job run that
    made it, or "inline" for a command), read from the database."""
    code = (
        "import django; django.setup()\n"
        "from mica.content.models import PublishedBuild\n"
        "for kind, name in PublishedBuild.objects.values_list('kind', 'name'):\n"
        "    print(kind, name)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split("\n")) - {""}


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="the port to serve (0: a free one)")
    port = parser.parse_args().port or _free_port()
    with tempfile.TemporaryDirectory(prefix="mica-restart-") as var_dir:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
        env.update(MICA_VAR_DIR=var_dir, DJANGO_SETTINGS_MODULE="mica.settings")
        prepared = prepared_copy(var_dir)
        first, process = first_page_seconds(env, port)
        stop(process)
        builds = published_builds(env)
        second, process = first_page_seconds(env, port)
        output = stop(process)
        new_builds = sorted(published_builds(env) - builds)
    start = "first start, " + ("prepared database:" if prepared else "fresh var directory:")
    print(f"{start:<34}first page after {first:.1f} s")
    print(f"{'second start, nothing changed:':<34}first page after {second:.1f} s")
    print(f"builds published by the second start: {len(new_builds)} {new_builds}")
    kept = [line for line in output.splitlines() if "Nothing changed" in line]
    print("\n".join(kept) or "(the second start said nothing about keeping the builds)")
    met = second <= TARGET_SECONDS and not new_builds
    print(f"target: at most {TARGET_SECONDS} s and no new build: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
