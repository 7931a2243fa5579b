"""Public pages from the page cache against the same bytes as a static file, side by side.

    .venv/bin/python bench/pages.py [--seconds 10] [--warmup 2] [--connections 8]
                                    [--clients 2] [--workers N] [--threads 4] [--renders 20]

On a fresh embedded database (SQLite, local-memory cache) in a temporary folder:

1. The uncached render of each page, in this process with django.test.Client and
   the cache cleared before every request: the median (target: under 50 ms).
2. gunicorn (the project's own, gthread workers so connections are kept alive)
   serves each page from the page cache, and the very same bytes as a static
   file through whitenoise, from the same server. The page bytes are rendered
   before the server starts, for the host and port it will answer on, written
   under STATIC_ROOT (whitenoise indexes that folder when a worker starts, so the
   file must exist first) and checked byte for byte against what the server sends.
3. A load generator in separate processes (raw HTTP/1.1 over keep-alive sockets,
   one thread per connection, so the client costs as little per request as it
   can) runs a warm-up and then a fixed time against each target, and prints
   requests per second, p50 and p95 latency, and cached / static throughput
   (target: at least 0.5).

Client and server share the machine, as the issue asks: both targets pay the
same client cost per request.
"""

import argparse
import multiprocessing
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [("/methodology/", "methodology"), ("/tasks/", "tasks"), ("/ko/markets/kr/", "market-kr")]
# Under STATIC_URL, so whitenoise serves STATIC_ROOT/bench-pages/ as it serves any static file.
STATIC_FOLDER = "bench-pages"
LENGTH_RE = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)
RENDER_TARGET_MS = 50
RATIO_TARGET = 0.5


def _environment(var_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        MICA_VAR_DIR=str(var_dir),
        MICA_STATIC_ROOT=str(var_dir / "static"),
        MICA_LOG_LEVEL="ERROR",
    )
    return env


def prepare(var_dir, port, renders):
    """Migrate, load the content, time uncached renders; return {path: page bytes}."""
    environment = _environment(var_dir)
    os.environ.clear()
    os.environ.update(environment)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    client = Client(HTTP_HOST=f"127.0.0.1:{port}")
    timings, pages = {}, {}
    for path, _name in PAGES:
        client.get(path)  # imports and template loading, not the data
        samples = []
        for _ in range(renders):
            cache.clear()
            started = time.perf_counter()
            response = client.get(path)
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200, (path, response.status_code)
        timings[path] = statistics.median(samples) * 1000
        cache.clear()
        pages[path] = client.get(path).content
    return timings, pages


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _fetch(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return response.status, dict(response.headers), response.read()


def _wait_until_serving(port, process, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("gunicorn exited before it served")
        try:
            if _fetch(port, "/healthz")[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start serving")


# --- Load generator ------------------------------------------------------------------


def _connection(port, path, stop_at, measure_from, latencies, errors):
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: mica-bench\r\n\r\n"
    ).encode()
    sock, buffer = None, bytearray()
    while True:
        started = time.perf_counter()
        if started >= stop_at:
            break
        try:
            if sock is None:
                sock = socket.create_connection(("127.0.0.1", port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                buffer.clear()
            started = time.perf_counter()
            sock.sendall(request)
            while (end := buffer.find(b"\r\n\r\n")) < 0:
                chunk = sock.recv(262144)
                if not chunk:
                    raise ConnectionError("closed")
                buffer += chunk
            head = bytes(buffer[:end])
            length = int(LENGTH_RE.search(head).group(1))
            total = end + 4 + length
            while len(buffer) < total:
                chunk = sock.recv(262144)
                if not chunk:
                    raise ConnectionError("closed")
                buffer += chunk
            finished = time.perf_counter()
            ok = head.startswith(b"HTTP/1.1 200")
            del buffer[:total]
            if b"\r\nconnection: close" in head.lower():
                sock.close()
                sock = None
            if started >= measure_from:
                if ok:
                    latencies.append(finished - started)
                else:
                    errors.append(head.split(b"\r\n", 1)[0])
        except (OSError, AttributeError, ValueError) as failure:
            if started >= measure_from:
                errors.append(repr(failure))
            if sock is not None:
                sock.close()
            sock = None
    if sock is not None:
        sock.close()


def _client_process(port, path, connections, start_at, measure_from, stop_at, results):
    latencies, errors = [], []
    while time.perf_counter() < start_at:
        time.sleep(0.001)
    threads = [
        threading.Thread(
            target=_connection, args=(port, path, stop_at, measure_from, latencies, errors)
        )
        for _ in range(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((latencies, errors[:5], len(errors)))


def load(port, path, seconds, warmup, connections, clients):
    """(requests per second, p50 ms, p95 ms, errors) for one target."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    start_at = time.perf_counter() + 0.2
    measure_from = start_at + warmup
    stop_at = measure_from + seconds
    per_client = max(1, connections // clients)
    processes = [
        context.Process(
            target=_client_process,
            args=(port, path, per_client, start_at, measure_from, stop_at, results),
        )
        for _ in range(clients)
    ]
    for process in processes:
        process.start()
    latencies, errors, error_count = [], [], 0
    for _ in processes:
        got, sample, count = results.get()
        latencies += got
        errors += sample
        error_count += count
    for process in processes:
        process.join()
    if not latencies:
        raise RuntimeError(f"no successful request to {path}: {errors}")
    latencies.sort()
    return (
        len(latencies) / seconds,
        latencies[len(latencies) // 2] * 1000,
        latencies[int(len(latencies) * 0.95)] * 1000,
        error_count,
    )


# --- Report ----------------------------------------------------------------------------


def machine():
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "unknown CPU",
    )
    memory_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    return (
        f"{os.cpu_count()} CPUs ({cpu}), {memory_kib / 1024 / 1024:.0f} GiB RAM, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10, help="measured time per target")
    parser.add_argument("--warmup", type=float, default=2, help="unmeasured time per target")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections")
    parser.add_argument("--clients", type=int, default=2, help="load generator processes")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--renders", type=int, default=20, help="uncached renders per page")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="mica-bench-pages-"))
    port = _free_port()
    timings, pages = prepare(var_dir, port, args.renders)
    static_dir = var_dir / "static" / STATIC_FOLDER
    static_dir.mkdir(parents=True, exist_ok=True)
    for path, name in PAGES:
        (static_dir / f"{name}.html").write_bytes(pages[path])

    server = subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            "mica.wsgi",
            f"--bind=127.0.0.1:{port}",
            f"--workers={args.workers}",
            "--worker-class=gthread",
            f"--threads={args.threads}",
            "--keep-alive=60",
            "--log-level=warning",
        ],
        cwd=ROOT,
        env=_environment(var_dir),
    )
    rows = []
    try:
        _wait_until_serving(port, server)
        for path, name in PAGES:
            static = f"/static/{STATIC_FOLDER}/{name}.html"
            cached_status, cached_headers, cached_body = _fetch(port, path)
            static_status, _static_headers, static_body = _fetch(port, static)
            assert cached_status == static_status == 200, (path, cached_status, static_status)
            assert "ETag" in cached_headers, f"{path} did not come through the page cache"
            assert cached_body == static_body, f"{path}: the static copy differs from the page"
            cached = load(port, path, args.seconds, args.warmup, args.connections, args.clients)
            served = load(port, static, args.seconds, args.warmup, args.connections, args.clients)
            rows.append((path, len(cached_body), timings[path], cached, served))
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(var_dir, ignore_errors=True)

    print(f"machine: {machine()}")
    print(
        f"gunicorn: {args.workers} gthread workers x {args.threads} threads; load: "
        f"{args.connections} keep-alive connections from {args.clients} processes, "
        f"{args.warmup:g} s warm-up + {args.seconds:g} s per target; "
        f"uncached render: median of {args.renders} on SQLite"
    )
    header = (
        f"{'page':<17}{'KiB':>5}{'render ms':>11}"
        f"{'cached rps':>12}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'static rps':>12}{'p50 ms':>8}{'p95 ms':>8}{'ratio':>7}"
    )
    print(header)
    print("-" * len(header))
    passed = True
    for path, size, render_ms, cached, served in rows:
        ratio = cached[0] / served[0]
        passed &= ratio >= RATIO_TARGET and render_ms < RENDER_TARGET_MS
        print(
            f"{path:<17}{size / 1024:>5.0f}{render_ms:>11.1f}"
            f"{cached[0]:>12.0f}{cached[1]:>8.2f}{cached[2]:>8.2f}"
            f"{served[0]:>12.0f}{served[1]:>8.2f}{served[2]:>8.2f}{ratio:>7.2f}"
        )
        for label, result in (("cached", cached), ("static", served)):
            if result[3]:
                print(f"  {label} {path}: {result[3]} failed requests")
    print(
        f"targets: cached >= {RATIO_TARGET} x static throughput, uncached render "
        f"< {RENDER_TARGET_MS} ms: {'met' if passed else 'NOT met'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
