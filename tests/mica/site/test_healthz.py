"""Health in two parts (issue 31, item 4): /healthz answers for the web node alone, so a
load balancer keeps serving nodes whatever the worker does; /healthz/system and the
admin's banner report the deployment's problems in English and Korean.

Real parts: heartbeats, job runs and table revisions are real rows, the broker that does
not answer is a closed port, the bake is a real one of a few pages."""

import datetime

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from mica.content.models import TableRevision
from mica.content.revision import revisions_bump
from mica.jobs.models import JobRun, JobState, WorkerHeartbeat
from mica.jobs.services import worker_heartbeat_record
from mica.site.health import system_problems_forget
from tests.factories import StaffFactory
from tests.support import MONITOR

pytestmark = pytest.mark.django_db

CLOSED_PORT = "redis://127.0.0.1:1/0"


@pytest.fixture(autouse=True)
def _fresh_banner():
    system_problems_forget()
    yield
    system_problems_forget()


@pytest.fixture
def nothing_published(settings, tmp_path):
    """No bake and no export set published: their directories are empty."""
    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    settings.EXPORT_DIR = tmp_path / "exports"


@pytest.fixture
def worker_needed(settings, tmp_path):
    """The embedded default as `make run` runs it: a broker of files and a worker to take
    from it, not jobs run inline."""
    settings.JOBS_EAGER, settings.CELERY_BROKER_URL = False, "mica-files://"
    settings.BROKER_DIR = tmp_path / "broker"
    (settings.BROKER_DIR / "queue").mkdir(parents=True)


def codes(response):
    return [problem["code"] for problem in response.json()["problems"]]


def problem(response, code):
    return next(p for p in response.json()["problems"] if p["code"] == code)


def test_healthz_reports_the_node_alone(client):
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "bake", "exports"}
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_dead_worker_leaves_healthz_200_and_the_system_503(client, worker_needed):
    """The fault of issue 31: with no worker, /healthz answered 503 on every web node and a
    load balancer took the whole site out, although the nodes served reads fine."""
    assert not WorkerHeartbeat.objects.exists()
    assert client.get("/healthz").status_code == 200
    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    assert "worker-missing" in codes(system)
    missing = problem(system, "worker-missing")["message"]
    assert missing["en"].startswith("No worker has ever reported a heartbeat")
    assert missing["ko"].startswith("워커가")

    worker_heartbeat_record(hostname="embedded@test")
    WorkerHeartbeat.objects.update(seen_at=timezone.now() - datetime.timedelta(seconds=600))
    assert client.get("/healthz").status_code == 200
    stale = client.get("/healthz/system", **MONITOR)
    assert stale.status_code == 503
    assert "worker-stale" in codes(stale) and "worker-missing" not in codes(stale)
    assert problem(stale, "worker-stale")["last_heartbeat_age_seconds"] >= 600

    worker_heartbeat_record(hostname="embedded@test")
    beating = client.get("/healthz/system", **MONITOR)
    assert not {"worker-stale", "worker-missing"} & set(codes(beating))


def test_an_unreachable_broker_fails_the_system_not_the_node(client, settings):
    settings.JOBS_EAGER, settings.CELERY_BROKER_URL = False, CLOSED_PORT
    worker_heartbeat_record(hostname="elsewhere@test")
    assert client.get("/healthz").status_code == 200
    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    unreachable = problem(system, "broker-unreachable")
    assert "Connection" in unreachable["error"]
    assert unreachable["message"]["ko"].startswith("작업 브로커")


def test_the_system_names_a_missing_export_set_and_bake(client, nothing_published):
    node = client.get("/healthz")
    assert node.status_code == 200
    assert node.json()["checks"]["exports"] == {"ok": True, "published": False}
    assert node.json()["checks"]["bake"] == {"ok": True, "published": False}
    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    assert {"exports-missing", "bake-missing"} <= set(codes(system))
    assert problem(system, "exports-missing")["message"]["en"] == (
        "No export set is published: the downloads page offers no files."
    )


@pytest.mark.vendor
def test_a_bake_behind_the_content_is_named_once_the_bound_passed(client, settings, tmp_path):
    from mica.site.bake import pages_bake

    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    pages_bake(paths=["/", "/ko/"])
    assert "bake-stale" not in codes(client.get("/healthz/system", **MONITOR))
    revisions_bump({"methodology_glossaryterm"})
    # Just after a change the next bake is on its way: no alarm.
    assert "bake-stale" not in codes(client.get("/healthz/system", **MONITOR))
    TableRevision.objects.update(changed_at=timezone.now() - datetime.timedelta(minutes=40))
    late = client.get("/healthz/system", **MONITOR)
    assert late.status_code == 503
    assert problem(late, "bake-stale")["minutes"] >= 40
    assert client.get("/healthz").status_code == 200


def test_failed_and_stuck_runs_are_named(client):
    now = timezone.now()
    failed = JobRun.objects.create(
        job_name="mica.site.tasks.pages_bake_run", state=JobState.FAILED, finished_at=now
    )
    running = JobRun.objects.create(
        job_name="mica.exports.tasks.exports_regenerate", state=JobState.RUNNING
    )
    JobRun.objects.filter(pk=running.pk).update(started_at=now - datetime.timedelta(hours=2))
    an_hour_ago = now - datetime.timedelta(hours=1)
    queued = JobRun.objects.create(job_name="mica.site.tasks.content_reload")
    JobRun.objects.filter(pk=queued.pk).update(queued_at=an_hour_ago, due_at=an_hour_ago)
    # Queued as long ago, but not due yet (a retry backing off): it waits, it is not stuck.
    backing_off = JobRun.objects.create(job_name="mica.governance.tasks.gate_rerun")
    JobRun.objects.filter(pk=backing_off.pk).update(queued_at=an_hour_ago, due_at=now)

    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    assert problem(system, "job-failed")["run"] == failed.pk
    assert problem(system, "job-failed")["message"]["en"] == (
        f"The latest run of the job “Page bake” (#{failed.pk}) failed."
    )
    assert problem(system, "job-failed")["message"]["ko"].startswith("작업 “공개 페이지 정적 생성”")
    assert problem(system, "job-stuck-running")["run"] == running.pk
    assert problem(system, "job-stuck-queued")["run"] == queued.pk
    stuck_queued = [p for p in system.json()["problems"] if p["code"] == "job-stuck-queued"]
    assert [p["run"] for p in stuck_queued] == [queued.pk]
    assert client.get("/healthz").status_code == 200

    # A later success of the same job clears its failure.
    JobRun.objects.create(
        job_name=failed.job_name,
        state=JobState.SUCCEEDED,
        finished_at=now + datetime.timedelta(seconds=1),
    )
    assert "job-failed" not in codes(client.get("/healthz/system", **MONITOR))


@pytest.fixture
def cache_redis_stopped(settings, tmp_path):
    """The node's cache on a Redis of its own that served, then stopped (as a cache Redis
    that goes down for a while does)."""
    import shutil
    import subprocess

    from tests.conftest import _free_port
    from tests.support import require, wait_for

    server = shutil.which("redis-server")
    require(server, "redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    caches = {
        name: {"BACKEND": "mica.caches.ResilientRedisCache", "LOCATION": url}
        for name in ("default", "fragments")
    }
    try:
        with override_settings(CACHES={**settings.CACHES, **caches}):
            from django.core.cache import cache

            def answering():
                """the cache Redis to answer"""
                cache.set("started", "1", 10)
                return cache.get("started") == "1"

            wait_for(answering, timeout=30)
            process.terminate()
            process.wait(timeout=10)
            yield
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def test_a_stopped_cache_redis_leaves_the_node_in_service_and_is_named(
    client, canonical_content, cache_redis_stopped
):
    """Issue 42, item 4: "With the cache Redis down for 30 s, every page, filing and save
    was served, yet /healthz answered 503 on both nodes": a load balancer would have taken
    every node out at once. An unreachable cache is a degradation: 200, named."""
    assert client.get("/methodology/").status_code == 200
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "degraded" and body["degraded"] == ["cache"]
    assert body["checks"]["cache"]["ok"] is False and body["checks"]["database"]["ok"] is True
    system = client.get("/healthz/system", **MONITOR)
    assert system.status_code == 503
    assert problem(system, "cache-unreachable")["message"]["ko"].startswith("캐시")


def test_a_node_without_its_database_is_taken_out(client, settings):
    """The node needs its database to serve: that, unlike the cache, fails /healthz."""
    from django.db import connection

    def refused(execute, sql, params, many, context):
        raise connection.Database.OperationalError("the database does not answer")

    with connection.execute_wrapper(refused):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


@pytest.fixture
def staff_client(client):
    client.force_login(StaffFactory(username="clerk"))
    return client


def test_the_admin_shows_the_system_problems_in_english(
    staff_client, worker_needed, nothing_published
):
    page = staff_client.get("/admin/").content.decode()
    assert 'class="system-problems"' in page
    assert "The system needs attention" in page
    assert "No worker has ever reported a heartbeat" in page
    assert "No export set is published: the downloads page offers no files." in page


def test_the_korean_admin_shows_them_in_korean(staff_client, worker_needed, nothing_published):
    page = staff_client.get("/ko/admin/").content.decode()
    assert '<html lang="ko"' in page
    assert "시스템 점검이 필요합니다" in page
    assert "워커가 하트비트를 한 번도 보내지 않았습니다" in page
    assert "공개된 내보내기 묶음이 없어" in page
    assert "No worker has ever" not in page


def test_the_banner_is_for_staff_and_only_when_something_is_wrong(client, staff_client):
    # The test suite's embedded layer runs jobs inline: nothing to report of the worker.
    system_problems_forget()
    page = staff_client.get("/admin/").content.decode()
    problems = client.get("/healthz/system", **MONITOR).json()["problems"]
    assert ("system-problems" in page) == bool(problems)
    client.logout()
    assert "system-problems" not in client.get("/admin/login/").content.decode()


def test_the_banner_reuses_its_report_for_a_few_seconds(
    staff_client, worker_needed, nothing_published, django_assert_max_num_queries
):
    staff_client.get("/admin/")
    with django_assert_max_num_queries(30) as first:
        staff_client.get("/admin/")
    system_problems_forget()
    with django_assert_max_num_queries(60) as afresh:
        staff_client.get("/admin/")
    assert len(afresh.captured_queries) > len(first.captured_queries)


@pytest.mark.vendor
def test_a_node_missing_a_layer_of_its_bake_is_not_healthy(client, settings, tmp_path):
    """Issue 31, item 4: /healthz answers for "the current build readable". A bake after a
    commit is a layer on the ones below it; a node whose copy lost one of them cannot
    serve that bake, and says so."""
    import shutil

    from mica.site.bake import bake_published, bake_root, pages_bake
    from mica.site.bake_layers import layer_directory, layers_below

    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    pages_bake(paths=["/markets/", "/methodology/"])
    revisions_bump({"methodology_glossaryterm"})
    # The methodology shows the glossary and is rendered again; the markets page does
    # not, and stays in the first bake, which the second now lies on.
    pages_bake(paths=["/markets/", "/methodology/"])
    healthy = client.get("/healthz").json()["checks"]["bake"]
    assert healthy == {"ok": True, "published": True, "pages": 2, "layers": 2}
    (below,) = layers_below(bake_published().manifest)
    shutil.rmtree(layer_directory(bake_root(), below))
    answer = client.get("/healthz")
    assert answer.status_code == 503
    assert below in answer.json()["checks"]["bake"]["error"]


def test_anonymous_callers_get_the_overall_status_only(
    staff_client, worker_needed, nothing_published, settings
):
    """Issue 42: "Anonymous callers of `/healthz/system` get the overall status only; its
    details are for staff or a monitoring token." The problems name hosts, queues and
    errors; the status alone still tells a monitor without the token that something is
    wrong, with the same code."""
    client = Client()  # nobody signed in
    anonymous = client.get("/healthz/system")
    assert anonymous.status_code == 503 and anonymous.json() == {"status": "problems"}
    wrong = client.get("/healthz/system", HTTP_AUTHORIZATION="Bearer not-the-token")
    assert wrong.json() == {"status": "problems"}
    for reader in (client.get("/healthz/system", **MONITOR), staff_client.get("/healthz/system")):
        assert reader.status_code == 503
        assert "worker-missing" in {p["code"] for p in reader.json()["problems"]}
    # Without a token configured, no header opens the details.
    settings.MONITORING_TOKEN = ""
    assert client.get("/healthz/system", HTTP_AUTHORIZATION="Bearer ").json() == {
        "status": "problems"
    }
