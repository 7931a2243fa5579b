"""Background work on the embedded default, as `make run` serves it: gunicorn, a Celery
worker and beat on the broker of files under var/ (`manage.py serve`), one SQLite file.

A job started in the admin returns at once and its progress is seen moving; a content
edit publishes a new export set after its debounce, with nobody pressing anything."""

import re
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import assert_accessible
from tests.deploy.test_stack import free_port, wait_for
from tests.support import fresh_environment, manage, serving

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "pw-for-tests-only"
# Enough tasks that a regeneration takes seconds, as it does for a grown catalogue.
SYNTHETIC_TASKS = 1000
LEAD = f"""
from django.contrib.auth.models import User
from django_otp.plugins.otp_totp.models import TOTPDevice
from catalogue.synthetic import synthetic_catalogue_create

synthetic_catalogue_create({SYNTHETIC_TASKS})
lead = User.objects.create_superuser("lead", "lead@example.org", "{PASSWORD}")
print(TOTPDevice.objects.create(user=lead, name="authenticator app", confirmed=True).key)
"""


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """`make run` on a fresh var/ directory: set up, then served with its worker and beat."""
    var = tmp_path_factory.mktemp("embedded-var")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = fresh_environment(
        var,
        MICA_SITE_URL=base,
        MICA_EXPORT_DEBOUNCE_SECONDS="2",
        MICA_WORKER_HEARTBEAT_INTERVAL="1",
        # The one worker takes one job at a time: a bake of the thousand generated tasks
        # would hold up the runs these tests watch (test_embedded_bake.py covers bakes).
        MICA_PAGE_BAKE_ON_CHANGE="0",
    )
    manage(env, "migrate", "--no-input")
    manage(env, "load_canonical_content")
    key = manage(env, "shell", "-c", LEAD).strip().splitlines()[-1]
    manage(env, "regenerate_exports", "--sync")
    with serving(env, port, var):
        yield {"base": base, "key": key, "var": var}
    # Stopping the command stops its worker and gunicorn with it.
    assert "Handling signal: term" in (var / "serve.log").read_text()


def fresh_code(embedded):
    """The device's code of a time step not used yet: django-otp refuses a code twice."""
    from django_otp.oath import TOTP

    while (step := int(time.time()) // 30) <= embedded.get("last_step", -1):
        time.sleep(1)
    embedded["last_step"] = step
    otp = TOTP(bytes.fromhex(embedded["key"]))
    otp.time = step * 30
    return f"{otp.token():06d}"


def sign_in(page, embedded):
    base = embedded["base"]
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "lead")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/second-factor/**")
    page.fill("#id_code", fresh_code(embedded))
    with page.expect_navigation():
        page.click("#second-factor-form input[type=submit]")


def newest_run(page):
    bar = page.locator("#result_list tbody tr").first.locator("progress")
    return bar.get_attribute("data-job-state"), int(bar.get_attribute("value"))


def test_a_job_started_in_the_admin_shows_its_progress_as_it_runs(page, embedded):
    sign_in(page, embedded)
    page.goto(f"{embedded['base']}/admin/jobs/jobrun/")
    with page.expect_navigation():
        page.get_by_role("button", name="Regenerate the exports").click()
    assert page.locator(".messagelist .success").count() == 1
    # The request only queued the run: the worker had not finished it when the page came.
    assert newest_run(page)[0] in ("queued", "running")
    row = page.locator("#result_list tbody tr").first
    assert "Export regeneration" in row.inner_text()

    seen, deadline = [], time.monotonic() + 120
    while (state := newest_run(page))[0] != "succeeded":
        if state not in seen:
            seen.append(state)
        assert state[0] in ("queued", "running"), state
        assert time.monotonic() < deadline, f"the page still shows {seen[-1]}"
        page.wait_for_timeout(150)
    # Without reloading the page, it showed the run part way through.
    assert any(state == "running" and 0 < value < 100 for state, value in seen), seen
    assert newest_run(page) == ("succeeded", 100)
    assert re.search(r"Published \d+ files for edition", row.inner_text())
    # Once no run on the page is left unfinished, assistive technology hears so.
    expect(page.locator("#job-progress-status")).to_have_text(
        "Every run shown here has finished.", timeout=60_000
    )
    assert_accessible(page)


def test_the_korean_admin_names_jobs_and_their_messages_in_korean(browser, embedded):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        sign_in(page, embedded)
        page.goto(f"{embedded['base']}/ko/admin/jobs/jobrun/")
        assert page.locator("html").get_attribute("lang") == "ko"
        # The page redraws itself until every run it shows has finished.
        expect(page.locator("#result_list")).to_contain_text(
            re.compile(r"파일 \d+개를 게시했습니다"), timeout=120_000
        )
        table = page.locator("#result_list").inner_text()
        assert "내보내기 다시 만들기" in table
        assert "Export regeneration" not in table and "mica.exports.tasks" not in table
        assert_accessible(page)
    finally:
        context.close()


def test_a_content_edit_publishes_a_new_export_set_by_itself(page, embedded):
    base = embedded["base"]
    sign_in(page, embedded)
    with urllib.request.urlopen(f"{base}/downloads/manifest.json", timeout=10) as response:
        before = response.read()
    page.goto(f"{base}/admin/methodology/glossaryterm/")
    with page.expect_navigation():
        page.locator("#result_list tbody tr th a").first.click()
    edited = page.input_value("#id_definition_en") + " Edited in the embedded admin."
    page.fill("#id_definition_en", edited)
    with page.expect_navigation():
        page.click("input[name=_save]")
    assert page.locator(".messagelist .success").count() == 1

    def republished():
        with urllib.request.urlopen(f"{base}/downloads/mica-methodology.en.md") as response:
            return "Edited in the embedded admin." in response.read().decode()

    wait_for(republished, timeout=120, what="the edit to reach the published English pack")
    with urllib.request.urlopen(f"{base}/downloads/manifest.json", timeout=10) as response:
        assert response.read() != before


def test_the_job_list_shows_who_started_each_run_and_fits_a_laptop_screen(browser, embedded):
    """Runs a person started stand apart from those content changes started on their own
    (the runs of the tests above: a regeneration started in the admin, then the bake and
    regeneration an edit set off), and the list fits a 1366 px screen without scrolling
    sideways, long messages included."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    try:
        sign_in(page, embedded)
        page.goto(f"{embedded['base']}/admin/jobs/jobrun/")
        filters = page.locator("#changelist-filter")
        assert "a person" in filters.inner_text() and "a content change" in filters.inner_text()
        with page.expect_navigation():
            filters.get_by_role("link", name="a person").click()
        started_by = page.locator("#result_list tbody td.field-started_by").all_inner_texts()
        assert started_by and set(started_by) == {"lead"}
        with page.expect_navigation():
            filters.get_by_role("link", name="a content change").click()
        jobs = page.locator("#result_list tbody td.field-started_by").all_inner_texts()
        assert jobs and set(jobs) == {"a content change"}
        page.goto(f"{embedded['base']}/admin/jobs/jobrun/")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1366, f"the job list is {width} px wide"
        assert_accessible(page)
    finally:
        context.close()
