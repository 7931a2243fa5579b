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
