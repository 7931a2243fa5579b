"""Run-record pages with demo data loaded: axe-clean in both languages, reflow at 320 px."""

import pytest
from django.core.management import call_command

from governance.models import GateCell
from tests.browser.conftest import assert_accessible, assert_reflows

pytestmark = pytest.mark.browser


@pytest.fixture
def demo_site(site):
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    return site


def test_result_pages_with_demo_data_pass_axe(page, demo_site):
    cell = GateCell.objects.select_related("snapshot__system", "market", "family").first()
    for prefix in ("", "/ko"):
        for path in [
            "/results/",
            "/systems/",
            "/systems/demo-harbor/",
            "/evidence/",
            f"/evidence/{cell.cell_id}/",
        ]:
            page.goto(f"{demo_site}{prefix}{path}")
            assert page.locator("main h1").count() == 1
            assert_accessible(page)
    page.set_viewport_size({"width": 320, "height": 640})
    assert_reflows(page, f"{demo_site}/evidence/{cell.cell_id}/")


def test_the_sensitivity_chart_passes_axe_and_reflows(page, site, client, staff, settings):
    """Seed: "No official figure may be published without a sensitivity analysis over the
    scoring policy, showing how a ranking moves under alternative normalizations and
    aggregations": its chart of ranks on /results/, axe-clean in both languages and
    readable at 320 px."""
    import json

    from tests.factories import (
        SnapshotFactory,
        SystemFactory,
        api_auth,
        independent_rerun,
        publishable_world,
    )

    settings.EXPORTS_ON_CHANGE = False
    publishable_world()
    SnapshotFactory(system=SystemFactory(slug="beta-agent", name="Beta Agent"), version="1.0")
    payloads = []
    for n in (1, 2):
        payloads.append(independent_rerun(n))
        beta = independent_rerun(n, wall_clock_seconds=200.0)
        beta.update(
            attempt_id=f"beta-kr-{n:03d}", snapshot={"system": "beta-agent", "version": "1.0"}
        )
        beta.update(tool_cost_usd="0.070000000", observed_cost_usd="0.100000000")
        payloads.append(beta)
    response = client.post(
        "/api/v1/attempts/",
        json.dumps(payloads),
        content_type="application/json",
        **api_auth(staff),
    )
    assert response.status_code == 201, response.json()
    for prefix in ("", "/ko"):
        page.goto(f"{site}{prefix}/results/")
        assert page.locator("table.rank-chart").count() >= 1
        assert_accessible(page)
    page.set_viewport_size({"width": 320, "height": 640})
    assert_reflows(page, f"{site}/results/")
    assert_reflows(page, f"{site}/ko/results/")
