"""/healthz in the embedded profile; the worker cases run against a real one."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


@override_settings(REDIS_URL=None, JOBS_EAGER=True)
def test_healthz_with_eager_jobs_reports_every_component(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "broker", "worker"}
    assert body["checks"]["broker"]["mode"] == "eager"
    assert body["checks"]["worker"]["mode"] == "eager"
    assert response["Cache-Control"].startswith("max-age=0")


def test_healthz_on_the_embedded_broker_needs_its_worker(client, settings, tmp_path):
    """The embedded default runs a real worker on a broker of files: no heartbeat, no
    health, as with Redis."""
    from mica.jobs.services import worker_heartbeat_record

    settings.REDIS_URL, settings.JOBS_EAGER, settings.BROKER_DIR = None, False, tmp_path
    (tmp_path / "queue").mkdir()
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": True, "mode": "filesystem"}
    assert "no worker has ever reported" in response.json()["checks"]["worker"]["error"]
    worker_heartbeat_record(hostname="embedded@test")
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["checks"]["worker"]["mode"] == "filesystem"
    (tmp_path / "queue").rmdir()
    assert client.get("/healthz").json()["checks"]["broker"]["ok"] is False


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_answers_503_when_the_broker_is_unreachable(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"]["ok"] is False
    assert "Connection" in body["checks"]["broker"]["error"]
