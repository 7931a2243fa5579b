"""/healthz in the embedded profile; the worker cases run against a real one."""

import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


@override_settings(REDIS_URL=None)
def test_healthz_with_eager_jobs_reports_every_component(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "cache", "broker", "worker"}
    assert body["checks"]["broker"]["mode"] == "eager"
    assert body["checks"]["worker"]["mode"] == "eager"
    assert response["Cache-Control"].startswith("max-age=0")


@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_healthz_answers_503_when_the_broker_is_unreachable(client):
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["broker"]["ok"] is False
    assert "Connection" in body["checks"]["broker"]["error"]
