"""The scope planner in Chromium: live with JavaScript, a plain form without, accessible."""

import json
import re

import pytest
from django.db.models import F

from catalogue.models import MarketApplicability, TaskDefinition, TaskSet
from markets.models import Market
from tests.browser.conftest import assert_accessible, assert_reflows
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser


def market_codes():
    return list(Market.objects.order_by("display_order").values_list("code", flat=True))


def public_task_ids():
    tasks = TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC, current_version__isnull=False)
    return list(
        tasks.exclude(lifecycle="retired")
        .order_by("family__position", "position", "slug")
        .values_list("slug", flat=True)
    )


def eligible_cells(markets, tasks):
    """Cells whose task's current version applies in the market, counted from the records."""
    rows = (
        MarketApplicability.objects.filter(
            version__definition__current_version=F("version"),
            market__code__in=markets,
            version__definition__slug__in=tasks,
        )
        .exclude(status="not-applicable")
        .count()
    )
    return rows


def figure(page, name):
    return int(page.locator(f'[data-figure="{name}"]').first.inner_text())


def test_with_javascript_the_summary_follows_each_tick(page, site):
    markets, tasks = market_codes(), public_task_ids()
    page.goto(f"{site}/evaluate/?mode=custom-matrix&market={markets[0]}&task={tasks[0]}")
    url = page.url
    assert page.locator("#scope-summary").get_attribute("aria-live") == "polite"
    assert figure(page, "planned") == 1

    page.check(f"#market-{markets[1]}")
    page.check(f"#task-{tasks[1]}")
    assert figure(page, "planned") == 4
    assert figure(page, "eligible") == eligible_cells(markets[:2], tasks[:2])
    assert figure(page, "not-applicable") == 4 - figure(page, "eligible")
    assert page.url == url, "the summary changed without a reload"

    page.check("#mode-country-focused")
    assert page.locator("#tasks").evaluate("group => group.disabled")
    assert not page.locator("#markets").evaluate("group => group.disabled")
    assert figure(page, "tasks") == len(tasks)
    assert figure(page, "planned") == 2 * len(tasks)

    page.check("#mode-full-benchmark")
    assert page.locator("#markets").evaluate("group => group.disabled")
    assert figure(page, "planned") == len(markets) * len(tasks)
    assert figure(page, "eligible") == eligible_cells(markets, tasks)
    manifest = page.locator("[data-planner-manifest] a").get_attribute("href")
    assert manifest == "/evaluate/manifest.json?mode=full-benchmark"


def test_the_live_manifest_link_downloads_the_scope_on_screen(page, site):
    markets, tasks = market_codes(), public_task_ids()
    page.goto(f"{site}/evaluate/")
    page.check("#mode-task-focused")
    page.check(f"#task-{tasks[2]}")
    with page.expect_download() as download:
        page.click("text=Download scope manifest")
    with open(download.value.path(), encoding="utf-8") as handle:
        manifest = json.load(handle)
    assert manifest["mode"] == "task-focused"
    assert manifest["counts"]["planned"] == figure(page, "planned") == len(markets) * 2


def test_without_javascript_submitting_the_form_updates_the_summary(browser, site):
    markets, tasks = market_codes(), public_task_ids()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto(f"{site}/ko/evaluate/")
        page.check("#mode-custom-matrix")
        page.check(f"#market-{markets[1]}")
        page.check(f"#task-{tasks[1]}")
        assert figure(page, "planned") == len(tasks), "nothing moves before the form is sent"
        page.get_by_role("button", name="요약 갱신").click()
        page.wait_for_load_state()
        assert "/ko/evaluate/?mode=custom-matrix" in page.url
        assert figure(page, "planned") == 4
        assert figure(page, "eligible") == eligible_cells(markets[:2], tasks[:2])
        assert page.locator("#mode-custom-matrix").is_checked()
    finally:
        context.close()


@pytest.mark.parametrize(
    "prefix, message",
    [("", "Select at least one market."), ("/ko", "시장을 하나 이상 선택하세요.")],
)
def test_an_empty_scope_shows_the_error_live_and_after_submitting(
    browser, page, site, prefix, message
):
    markets = market_codes()
    page.goto(f"{site}{prefix}/evaluate/")
    errors = page.locator("[data-planner-errors]")
    assert errors.is_hidden()
    page.uncheck(f"#market-{markets[0]}")
    assert errors.is_visible() and errors.get_attribute("role") == "alert"
    assert page.get_by_role("link", name=message).is_visible()
    assert figure(page, "planned") == 0
    assert page.locator("[data-planner-manifest]").is_hidden()
    page.get_by_role("link", name=message).click()
    assert page.url.endswith(f"#market-{markets[0]}")

    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    try:
        plain.goto(f"{site}{prefix}/evaluate/")
        plain.uncheck(f"#market-{markets[0]}")
        plain.locator("form[data-planner] button[type=submit]").click()
        plain.wait_for_load_state()
        assert plain.locator("[data-planner-errors]").is_visible()
        assert plain.get_by_role("link", name=message).is_visible()
        assert re.match(r"(Error|오류):", plain.title())
        assert figure(plain, "planned") == 0
    finally:
        context.close()


def test_a_submitted_empty_scope_takes_focus_to_the_error_summary(page, site):
    page.goto(f"{site}/evaluate/?mode=custom-matrix")
    assert page.evaluate("document.activeElement.getAttribute('role')") == "alert"


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_planner_and_its_error_state_pass_axe(page, site, prefix):
    page.goto(f"{site}{prefix}/evaluate/")
    assert_accessible(page)
    page.check("#mode-full-benchmark")
    assert_accessible(page)
    page.goto(f"{site}{prefix}/evaluate/?mode=custom-matrix")
    assert page.locator("[data-planner-errors]").is_visible()
    assert_accessible(page)


@pytest.mark.parametrize(
    "path",
    [
        "/evaluate/",
        "/ko/evaluate/",
        "/evaluate/?mode=custom-matrix",
        "/ko/evaluate/?mode=custom-matrix",
    ],
)
def test_the_planner_reflows_at_320_px(narrow_page, site, path):
    assert_reflows(narrow_page, f"{site}{path}")
