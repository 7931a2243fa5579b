"""Two web nodes, one worker and one beat on PostgreSQL, a Redis of their own and SeaweedFS,
each node with its own local directories: what one node or the worker commits, both serve
at once, and what the worker publishes, both serve within seconds (issue 31, item 8)."""

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import global_settings
from django.utils import timezone

from mica.content.models import PublishedPointer
from mica.jobs.models import JobRun, JobState
from mica.methodology.models import Edition, GlossaryTerm
from mica.methodology.services import edition_publish
from mica.signing import private_key_text
from submissions.challenges import challenge_confirm, challenge_transition
from submissions.models import Challenge, OutboxMessage, OutboxState
from tests.conftest import ObjectStore, WorkerProcess, _free_port, _test_database_url
from tests.deploy.test_stack import ROOT, Browser, glossary_term_edit, lead_signed_in, wait_for
from tests.factories import LeadFactory, StaffFactory, challenge_payload, confirmation_token

pytestmark = [pytest.mark.broker, pytest.mark.django_db(transaction=True)]

BAKE = "mica.site.tasks.pages_bake_run"
# Pages every node must serve alike: baked ones and one that lists the public challenges.
PAGES = ("/methodology/", "/ko/methodology/", "/editions/", "/challenges/", "/tasks/")


class RedisServer:
    """A Redis of the stack's own, to stop and start again (the suite's Redis is shared)."""

    def __init__(self, directory):
        self.port, self.directory, self.process = _free_port(), directory, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
        )
        wait_for(lambda: _answers(f"127.0.0.1:{self.port}"), what="the stack's Redis")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _answers(address):
    import redis

    try:
        return redis.Redis.from_url(f"redis://{address}/0", socket_timeout=1).ping()
    except redis.RedisError:
        return False


def _get(base, path, headers=None):
    request = urllib.request.Request(base + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def _post_json(base, path, document):
    request = urllib.request.Request(
        base + path,
        data=json.dumps(document).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def cluster(object_store, canonical_content, tmp_path, settings):
    store, bucket = object_store
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    shared = {
        **ObjectStore.ACCESS,
        "MICA_S3_BUCKET": bucket,
        "MICA_S3_ENDPOINT_URL": store.endpoint,
        "MICA_S3_REGION": "us-east-1",
        "MICA_S3_PREFIX": tmp_path.name,
        "MICA_WEB_NODES": "2",
        "MICA_REDIS_URL": redis_server.url,
        "MICA_EXPORTS_ON_CHANGE": "1",
        "MICA_PAGE_BAKE_ON_CHANGE": "1",
        "MICA_EXPORT_DEBOUNCE_SECONDS": "1",
        "MICA_PAGE_BAKE_DEBOUNCE_SECONDS": "1",
        "MICA_PAGE_BAKE_PROCESSES": "1",
        "MICA_WORKER_HEARTBEAT_INTERVAL": "1",
        "MICA_WORKER_HEARTBEAT_MAX_AGE": "5",
        "MICA_JOB_SILENT_SECONDS": "5",
        "MICA_JOB_HEARTBEAT_SECONDS": "1",
        "MICA_JOB_REAP_INTERVAL": "1",
        "MICA_OUTBOX_SWEEP_INTERVAL": "2",
        "MICA_OUTBOX_SWEEP_AFTER_SECONDS": "1",
        "MICA_BEAT_LEASE_SECONDS": "10",
    }
    # Every machine that publishes signs with one key (mica.signing), this process too (it
    # publishes an edition): keys of their own would each retire the others'.
    shared["MICA_SIGNING_KEY"] = private_key_text(Ed25519PrivateKey.generate())
    settings.SIGNING_KEY = shared["MICA_SIGNING_KEY"]
    ports = {"a": _free_port(), "b": _free_port()}
    site_url = f"http://127.0.0.1:{ports['a']}"  # one public address: the balancer's
    secret = "a key the nodes share, for tests only " + tmp_path.name

    def machine(name, **more):
        var = tmp_path / name
        var.mkdir()
        (var / "secret_key").write_text(secret)
        return {
            **shared,
            "MICA_VAR_DIR": str(var),
            "MICA_EXPORT_DIR": str(var / "exports"),
            "MICA_PAGE_BAKE_DIR": str(var / "pages"),
            "MICA_SITE_URL": site_url,
            **more,
        }

    database = _test_database_url()
    logs = open(tmp_path / "cluster.log", "w")
    processes = []
    for node in ("a", "b"):
        env = {**os.environ, "MICA_DATABASE_URL": database}
        env.update(machine(node, MICA_BIND=f"127.0.0.1:{ports[node]}", MICA_WEB_WORKERS="2"))
        processes.append(
            subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "mica.wsgi"],
                cwd=ROOT,
                env=env,
                stdout=logs,
                stderr=subprocess.STDOUT,
            )
        )
    worker_env = machine("worker")
    beat_env = {**os.environ, "MICA_DATABASE_URL": database, **machine("beat")}
    processes.append(
        subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "mica", "beat", "--loglevel", "INFO"]
            + ["--schedule", str(tmp_path / "beat-schedule")],
            cwd=ROOT,
            env=beat_env,
            stdout=logs,
            stderr=subprocess.STDOUT,
        )
    )
    workers = [WorkerProcess(database, tmp_path / "worker.log", **worker_env)]
    # gunicorn checks the password with the deployment's own hashers.
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS
    try:
        workers[0].wait_until_ready()
        yield {
            "a": f"http://127.0.0.1:{ports['a']}",
            "b": f"http://127.0.0.1:{ports['b']}",
            "workers": workers,
            "worker_env": worker_env,
            "redis": redis_server,
            "database": database,
            "tmp": tmp_path,
        }
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)
        for worker in workers:
            worker.stop()
        redis_server.stop()


def _same_on_both(cluster, path):
    """(status, body) of `path`, the same bytes from both nodes, or None while they differ."""
    status_a, headers_a, body_a = _get(cluster["a"], path)
    status_b, headers_b, body_b = _get(cluster["b"], path)
    if (status_a, body_a) != (status_b, body_b):
        return None
    if headers_a.get("ETag") != headers_b.get("ETag"):
        return None
    return status_a, body_a


def _published_on_both(cluster, needle):
    def check():
        found = _same_on_both(cluster, "/downloads/mica-methodology.en.md")
        return found and found[0] == 200 and needle.encode() in found[1]

    return check


def test_two_nodes_agree_and_survive_a_dead_worker_and_a_lost_broker(cluster):
    a, b = cluster["a"], cluster["b"]
    for base in (a, b):
        wait_for(lambda base=base: _get(base, "/healthz")[0] == 200, what="/healthz on a node")

    # The first publication, as `make run` makes it: from the worker's machine.
    manage = [sys.executable, "manage.py"]
    env = {**os.environ, "MICA_DATABASE_URL": cluster["database"], **cluster["worker_env"]}
    for command in (["regenerate_exports", "--sync"], ["bake_pages", "--sync"]):
        subprocess.run(manage + command, cwd=ROOT, env=env, check=True, capture_output=True)
    wait_for(_published_on_both(cluster, "# "), timeout=15, what="both nodes' export sets")

    # An edit through node A's admin: both nodes serve it at once, pages and all.
    browser = Browser(a)
    wait_for(lambda: browser.get("/healthz")[0] == 200, what="node A")
    lead_signed_in(browser)
    term = GlossaryTerm.objects.order_by("pk").first()
    glossary_term_edit(browser, term, " Edited on node A.")
    for path in PAGES:
        found = _same_on_both(cluster, path)
        assert found, f"{path} differs between the nodes"
    glossary = _same_on_both(cluster, "/methodology/")[1].decode()
    assert "Edited on node A." in glossary

    # A challenge filed through node B, confirmed and screened elsewhere: public on both.
    status, filed = _post_json(b, "/api/v1/challenges/", challenge_payload())
    assert status == 201, filed
    challenge = Challenge.objects.get(pk=filed["id"])
    challenge_confirm(token=confirmation_token(challenge))
    editor = StaffFactory(username="editor-two-nodes", is_superuser=True)
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
    )
    listing = _same_on_both(cluster, "/challenges/")
    assert listing and f"/challenges/{challenge.pk}/" in listing[1].decode()

    # An edition published by the method lead: "Published" on both nodes at once.
    edition = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=edition.pk, actor=LeadFactory(username="lead-two-nodes"))
    assert _same_on_both(cluster, "/editions/"), "/editions/ differs between the nodes"

    # Within 15 s the worker has published exports with the edit; both nodes serve them.
    wait_for(_published_on_both(cluster, "Edited on node A."), timeout=15, what="the exports")
    manifest = _same_on_both(cluster, "/downloads/manifest.json")
    assert manifest and manifest[0] == 200

    # The worker is killed in the middle of a bake: the published build stays whole, the
    # run is reaped and a fresh run publishes.
    published = PublishedPointer.objects.get(kind="pages").build_id
    subprocess.run(manage + ["bake_pages"], cwd=ROOT, env=env, check=True, capture_output=True)

    def bake_running():
        return JobRun.objects.filter(job_name=BAKE, state=JobState.RUNNING).first()

    killed = wait_for(bake_running, timeout=30, what="a bake to start")
    cluster["workers"][0].kill()
    assert PublishedPointer.objects.get(kind="pages").build_id == published
    for path in PAGES:
        assert _same_on_both(cluster, path), f"{path} differs after the worker died"
    replacement = WorkerProcess(
        cluster["database"], cluster["tmp"] / "worker-2.log", **cluster["worker_env"]
    )
    cluster["workers"].append(replacement)
    replacement.wait_until_ready()

    def reaped():
        killed.refresh_from_db()
        return killed.state == JobState.FAILED

    wait_for(reaped, timeout=30, what="the dead worker's bake to be reaped")
    wait_for(
        lambda: PublishedPointer.objects.get(kind="pages").build_id != published,
        timeout=60,
        what="a fresh bake to be published",
    )

    # The broker goes down: a filing is still stored and answered, and its receipt is sent
    # once the broker is back.
    stopped_at = timezone.now()
    cluster["redis"].stop()
    down = challenge_payload(what_is_wrong="Filed while the broker was down.")
    status, filed = _post_json(b, "/api/v1/challenges/", down)
    assert status == 201, filed
    assert Challenge.objects.filter(pk=filed["id"]).exists()
    for path in PAGES:
        assert _get(a, path)[0] == 200 and _get(b, path)[0] == 200, path
    cluster["redis"].start()

    def receipt_sent():
        messages = OutboxMessage.objects.filter(created_at__gte=stopped_at)
        return messages.exists() and all(m.state == OutboxState.SENT for m in messages)

    wait_for(receipt_sent, timeout=60, what="the receipt to be sent after the broker returned")
