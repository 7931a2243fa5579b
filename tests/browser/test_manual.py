"""The manual's guides, walked step by step in Chromium in English and Korean: each step
the manual describes is taken here as a person takes it, checked, and (with
MICA_SCREENSHOTS set) saved as the screenshot the guide shows (tests/browser/screenshots.py).

Issue 34, item 9: "guides for authors, reviewers, the method lead, operators, challengers
and deployers, in English and Korean, each step with a screenshot taken by the browser
tests".
"""

import json
import time
from urllib.parse import urljoin

import pytest

from tests.browser.conftest import assert_accessible
from tests.browser.screenshots import VIEWPORT
from tests.browser.screenshots import shoot as screenshot
from tests.browser.test_content_security_policy import visit, watched  # noqa: F401 (fixture)
from tests.factories import (
    PASSWORD,
    LeadFactory,
    SystemFactory,
    catalogue_editor,
    totp_code,
    totp_device,
)

pytestmark = pytest.mark.browser


def shoot(page, name, language, at=None):
    """A step of a journey: axe finds no WCAG A or AA violation on the page it reached,
    and the manual gets its screenshot."""
    assert_accessible(page)
    return screenshot(page, name, language, at=at)


LANGUAGES = [("en", ""), ("ko", "/ko")]
# One task a language, so that one content load serves both walks.
SLUGS = {"en": "ec-confirm-pharmacy-pickup", "ko": "ec-confirm-clinic-letter"}
WORDS = {
    "en": {
        "title": "Confirm a pharmacy pickup by e-mail",
        "final": "The pharmacy has confirmed the pickup time in writing.",
        "boundary": "The agent sends the request only after the user approves it.",
        "clauses": [
            ("obligation", "The reply names the pickup time."),
            ("invariant", "Other prescriptions are unchanged."),
            ("prohibited", "Two pickups are booked."),
        ],
        "parameter": "Days until the pickup.",
        "reason": "A duplicate of another task.",
        "what": "The scope claim overlooks an earlier benchmark.",
        "replacement": "Narrow the claim to consumer agents in these six markets.",
        "grounds": "The decision missed a source I cited.",
    },
    "ko": {
        "title": "약국 수령을 메일로 확정하기",
        "final": "약국이 수령 시각을 글로 확정했습니다.",
        "boundary": "에이전트는 사용자가 승인한 뒤에만 요청을 보냅니다.",
        "clauses": [
            ("obligation", "답장에 수령 시각이 적혀 있습니다."),
            ("invariant", "다른 처방은 바뀌지 않습니다."),
            ("prohibited", "수령 예약이 두 건 잡힌 상태."),
        ],
        "parameter": "수령까지 남은 일수입니다.",
        "reason": "다른 과제와 중복되어 폐기합니다.",
        "what": "범위에 관한 주장이 앞선 벤치마크를 빠뜨렸습니다.",
        "replacement": "주장을 이 여섯 시장의 소비자 에이전트로 좁혀 주세요.",
        "grounds": "제가 인용한 출처를 결정에서 검토하지 않았습니다.",
    },
}
MARKETS = ["KR", "JP", "SG", "TW", "AE", "TH"]


@pytest.fixture
def published(site):
    """The export set published, as `make run` leaves it: the admin then shows no
    "no export set" banner, and the downloads page lists the files."""
    import io

    from django.core.management import call_command

    call_command("regenerate_exports", "--sync", stdout=io.StringIO())
    return site


@pytest.fixture
def page(browser):
    """A page of the manual's screenshot size."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    yield page
    context.close()


def sign_in(page, site, user, prefix):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    page.context.clear_cookies()
    page.goto(f"{site}{prefix}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    for _attempt in range(2 if device is not None else 0):
        page.fill("#id_code", totp_code(device))
        with page.expect_navigation():
            page.click("#second-factor-form input[type=submit]")
        if "/second-factor/" not in page.url:
            break
        # A code opens one session: the walk in the other language waits for the next.
        time.sleep(31 - time.time() % 30)


def save(page, button="input[name=_save]"):
    with page.expect_navigation():
        page.click(button)


def run_action(page, action, row_text):
    page.locator("#result_list tr", has_text=row_text).locator("input.action-select").check()
    page.select_option("select[name=action]", action)
    with page.expect_navigation():
        page.click("button[name=index]")


def messages(page):
    return page.inner_text(".messagelist") if page.locator(".messagelist").count() else ""


def autocomplete(page, select_id, term):
    page.click(f"#{select_id} + .select2 .select2-selection")
    page.fill(".select2-search__field", term)
    page.locator(".select2-results__option", has_text=term).first.click()


def _pk(model, **lookup):
    return str(model.objects.get(**lookup).pk)


def author_writes_the_task(page, site, lang, prefix):
    """Authors, steps 2 and 3: the task, then its version, both languages side by side."""
    from catalogue.models import TaskFamily
    from markets.models import Market

    words = WORDS[lang]
    page.goto(f"{site}{prefix}/admin/catalogue/taskdefinition/add/")
    page.fill("#id_slug", SLUGS[lang])
    page.select_option("#id_family", _pk(TaskFamily, slug="email-calendar"))
    page.fill("#id_position", "60" if lang == "en" else "61")
    shoot(page, "authors/02-task-definition", lang)
    save(page)
    assert "/add/" not in page.url, page.inner_text("#content-main")[:2000]

    page.goto(f"{site}{prefix}/admin/catalogue/taskversion/add/")
    autocomplete(page, "id_definition", SLUGS[lang])
    page.fill("#id_version", "1.0.0")
    for field, key in (
        ("title", "title"),
        ("final_state", "final"),
        ("confirmation_boundary", "boundary"),
    ):
        page.fill(f"#id_{field}_en", WORDS["en"][key])
        page.fill(f"#id_{field}_ko", WORDS["ko"][key])
    page.check("input[name=evidence_requirements][value=authoritative-response]")
    page.check("input[name=evidence_requirements][value=post-action-readback]")
    page.select_option("#id_surface", "web")
    page.select_option("#id_termination_class", "completed-final-state")
    page.select_option("#id_declared_complexity", "single-step")
    page.check("input[name=diagnostic_axes][value=localization]")
    page.check("input[name=locality_conditions][value=language-and-register]")
    page.fill("#id_parameter_schema-0-name", "days_ahead")
    page.select_option("#id_parameter_schema-0-type", "date-offset-days")
    page.fill("#id_parameter_schema-0-min", "1")
    page.fill("#id_parameter_schema-0-max", "7")
    page.fill("#id_parameter_schema-0-description_en", WORDS["en"]["parameter"])
    page.fill("#id_parameter_schema-0-description_ko", WORDS["ko"]["parameter"])
    page.select_option("#id_reference_status", "registered")
    page.fill("#id_reference_sample_size", "12")
    page.fill("#id_speed_reference_seconds", "300")
    page.fill("#id_cost_reference_usd", "0.2000")
    for index, ((kind, en), (_kind, ko)) in enumerate(
        zip(WORDS["en"]["clauses"], WORDS["ko"]["clauses"], strict=True)
    ):
        page.locator("#clauses-group .add-row a").click()
        page.select_option(f"#id_clauses-{index}-kind", kind)
        page.fill(f"#id_clauses-{index}-text_en", en)
        page.fill(f"#id_clauses-{index}-text_ko", ko)
    for index, code in enumerate(MARKETS):
        page.locator("#applicability-group .add-row a").click()
        page.select_option(f"#id_applicability-{index}-market", _pk(Market, code=code))
        status = "applicable" if code == "KR" else "not-applicable"
        page.select_option(f"#id_applicability-{index}-status", status)
        page.fill(f"#id_applicability-{index}-note_en", f"Written for {code}.")
        page.fill(f"#id_applicability-{index}-note_ko", f"{code} 기준으로 썼습니다.")
    shoot(page, "authors/03-task-version", lang)
    save(page)
    assert "/add/" not in page.url, page.inner_text("#content-main")[:3000]
    assert words["title"]


def author_sends_it_to_review(page, site, lang, prefix):
    """Authors, steps 4 and 5: a local review in Korea, submitted."""
    from catalogue.models import LocalReview
    from markets.models import Market

    page.goto(f"{site}{prefix}/admin/catalogue/localreview/add/")
    autocomplete(page, "id_version", SLUGS[lang])
    page.select_option("#id_market", _pk(Market, code="KR"))
    shoot(page, "authors/04-local-review", lang)
    save(page)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/")
    run_action(page, "submit", SLUGS[lang])
    assert messages(page)
    shoot(page, "authors/05-review-submitted", lang)
    assert LocalReview.objects.get(version__definition__slug=SLUGS[lang]).state == "in-review"


def reviewer_decides(page, site, lang, prefix, reviewer):
    """Reviewers: the queue, the review's page, the approval."""
    from catalogue.models import LocalReview

    review = LocalReview.objects.get(version__definition__slug=SLUGS[lang])
    sign_in(page, site, reviewer, prefix)
    page.goto(f"{site}{prefix}/admin/")
    assert page.locator("#work-queues").count() == 1
    shoot(page, "reviewers/01-work-queues", lang)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/{review.pk}/change/")
    shoot(page, "reviewers/02-review-page", lang)
    page.goto(f"{site}{prefix}/admin/catalogue/localreview/?q={SLUGS[lang]}")
    run_action(page, "approve", SLUGS[lang])
    shoot(page, "reviewers/03-approved", lang)
    review.refresh_from_db()
    assert review.state == "approved", messages(page)


def lead_publishes(page, site, lang, prefix, lead):
    """The method lead: promote, make current, the public page, thresholds, publication,
    retirement."""
    from catalogue.models import TaskDefinition
    from mica.methodology.models import Edition

    sign_in(page, site, lead, prefix)
    page.goto(f"{site}{prefix}/admin/catalogue/taskversion/?q={SLUGS[lang]}")
    run_action(page, "promote_task", SLUGS[lang])
    shoot(page, "method-lead/01-promoted", lang)
    run_action(page, "make_current", SLUGS[lang])
    shoot(page, "method-lead/02-made-current", lang)
    task = TaskDefinition.objects.get(slug=SLUGS[lang])
    assert task.lifecycle == "validated" and task.current_version.version == "1.0.0"

    assert page.goto(f"{site}{prefix}/tasks/{SLUGS[lang]}/").status == 200
    assert WORDS[lang]["title"] in page.inner_text("main")
    shoot(page, "method-lead/03-public-task", lang)

    edition = Edition.objects.get(slug="preview-0.1")
    page.goto(f"{site}{prefix}/admin/methodology/edition/{edition.pk}/change/")
    for field, value in (
        ("min_eligible_runs", "30"),
        ("min_coverage", "80"),
        ("runs_per_task", "3"),
        ("max_ineligible_discard_rate", "10"),
    ):
        page.fill(f"#id_{field}", value)
    shoot(page, "method-lead/04-thresholds", lang, at=".field-min_eligible_runs")
    save(page, "input[name=_continue]")
    edition.refresh_from_db()
    assert edition.runs_per_task == 3, messages(page)

    page.goto(f"{site}{prefix}/admin/methodology/edition/")
    page.check(f"input[name=_selected_action][value='{edition.pk}']")
    page.select_option("select[name=action]", "publish")
    with page.expect_navigation():
        page.click("button[name=index]")
    shoot(page, "method-lead/05-publish-confirm", lang)
    edition.refresh_from_db()
    assert edition.status == "draft", "nothing is published before it is confirmed"

    page.goto(f"{site}{prefix}/admin/catalogue/taskdefinition/?q={SLUGS[lang]}")
    run_action(page, "retire", SLUGS[lang])
    assert page.locator("#id_reason[required]").count() == 1
    page.fill("#id_reason", WORDS[lang]["reason"])
    shoot(page, "method-lead/06-retire", lang)
    with page.expect_navigation():
        page.click("input[type=submit][value]")
    task.refresh_from_db()
    assert task.lifecycle == "retired"


def test_a_task_from_its_author_through_review_to_the_method_lead(page, site, published):
    """Authors, Reviewers and The method lead: a task a language, from the author's first
    form to its public page, then retired."""
    # A lead a language: a code opens one session, and the second walk comes within its
    # 30 seconds.
    leads = {lang: LeadFactory(username=f"manual-lead-{lang}") for lang, _prefix in LANGUAGES}
    for lead in leads.values():
        totp_device(lead)
    author = catalogue_editor("manual-author", ["AUTHOR"], leads["en"])
    reviewer = catalogue_editor("manual-reviewer", ["REVIEWER"], leads["en"])
    for lang, prefix in LANGUAGES:
        walk_a_task(page, site, lang, prefix, leads[lang], author, reviewer)


def walk_a_task(page, site, lang, prefix, lead, author, reviewer):
    page.context.clear_cookies()
    page.goto(f"{site}{prefix}/admin/login/")
    page.fill("#id_username", author.username)
    shoot(page, "authors/01-sign-in", lang)
    sign_in(page, site, author, prefix)
    author_writes_the_task(page, site, lang, prefix)
    author_sends_it_to_review(page, site, lang, prefix)
    page.goto(f"{site}{prefix}/admin/")
    assert page.locator("#work-queues").count() == 1
    shoot(page, "authors/06-my-work", lang)

    reviewer_decides(page, site, lang, prefix, reviewer)
    lead_publishes(page, site, lang, prefix, lead)


def test_a_challenge_filed_confirmed_decided_and_appealed(page, site):
    """Challengers: the form, the reference number, the confirmation link, the public
    page once decided, the appeal; a challenge a language."""
    decider = LeadFactory(username="manual-decider")
    for lang, prefix in LANGUAGES:
        walk_a_challenge(page, site, lang, prefix, decider)


def walk_a_challenge(page, site, lang, prefix, decider):
    from governance.models import Appeal
    from submissions.challenges import appeal_token, challenge_transition, confirmation_token
    from submissions.models import Challenge

    words = WORDS[lang]
    page.goto(f"{site}{prefix}/submit/challenge/?section=world-first-claim")
    page.select_option("#id_challenge_type", "method")
    page.fill("#id_what_is_wrong", words["what"])
    page.fill("#id_proposed_replacement", words["replacement"])
    page.fill("#id_citations", "https://example.org/earlier-benchmark 2026-11-20")
    page.fill("#id_contact_email", "filer@example.org")
    shoot(page, "challengers/01-form", lang)
    with page.expect_navigation():
        page.locator("form button[type=submit], form input[type=submit]").last.click()
    challenge = Challenge.objects.latest("pk")
    assert f"#{challenge.pk}" in page.inner_text("main")
    shoot(page, "challengers/02-filed", lang)

    page.goto(f"{site}{prefix}/submit/challenge/confirm/{confirmation_token(challenge)}/")
    assert f"#{challenge.pk}" in page.inner_text("main")
    shoot(page, "challengers/03-confirmed", lang)

    for action in ("screen", "triage", "reject"):
        challenge_transition(
            challenge_id=challenge.pk, action=action, reason="Out of scope.", actor=decider
        )
    # The public page offers no appeal form: the challenger's is the e-mailed link.
    page.goto(f"{site}{prefix}/challenges/{challenge.pk}/")
    assert page.locator("[name=grounds]").count() == 0
    page.goto(f"{site}{prefix}/challenges/{challenge.pk}/appeal/?token={appeal_token(challenge)}")
    assert page.locator("[name=grounds]").count() == 1
    shoot(page, "challengers/04-decided", lang, at="main")
    page.fill("[name=grounds]", words["grounds"])
    with page.expect_navigation():
        page.locator("[name=grounds]").locator("xpath=ancestor::form").locator(
            "button[type=submit], input[type=submit]"
        ).first.click()
    assert Appeal.objects.filter(challenge=challenge).count() == 1
    assert page.locator("[name=grounds]").count() == 0
    shoot(page, "challengers/05-appealed", lang)


def test_an_operator_submits_a_system_and_records_attempts(page, site):
    """Operators: the submission form, the operator guide, the API console with a token,
    the system's public page."""
    from submissions.api.examples import ATTEMPT, SYSTEM_SUBMISSION
    from tests.factories import SnapshotFactory, UserFactory, api_token

    operator = UserFactory(username="harbor-ops")
    system = SystemFactory(slug=ATTEMPT["snapshot"]["system"], operator_account=operator)
    SnapshotFactory(
        system=system,
        version=ATTEMPT["snapshot"]["version"],
        routable_models=SYSTEM_SUBMISSION["routable_models"],
        tools=SYSTEM_SUBMISSION["tools"],
    )
    for lang, prefix in LANGUAGES:
        walk_an_operator(page, site, lang, prefix, system, api_token(operator))


def walk_an_operator(page, site, lang, prefix, system, token):
    page.goto(f"{site}{prefix}/submit/system/")
    page.fill("#id_name", "Harbor Agent")
    page.fill("#id_operator", "Harbor Labs")
    page.fill("#id_version", "2026.11")
    shoot(page, "operators/01-system-submission", lang)

    assert page.goto(f"{site}{prefix}/submit/operators/").status == 200
    shoot(page, "operators/02-operator-guide", lang)

    page.goto(f"{site}{prefix}/api/docs/#try-attempts")
    page.fill("#try-token", token)
    page.click(".try-console button[type=submit]")
    page.wait_for_selector("#try-answer:not([hidden])")
    assert json.loads(page.inner_text("#try-answer"))
    shoot(page, "operators/03-api-console", lang, at=".try-console")

    assert page.goto(f"{site}{prefix}/systems/{system.slug}/").status == 200
    shoot(page, "operators/04-system-page", lang)


def test_a_deployer_enrols_the_first_administrator_and_watches_the_system(page, site, published):
    """Deployers: the first administrator's enrolment (password, enrolment code, QR code),
    then the admin's background jobs, /healthz/system and the downloads; an administrator
    a language."""
    for lang, prefix in LANGUAGES:
        walk_a_deployment(page, site, lang, prefix)


def walk_a_deployment(page, site, lang, prefix):
    from django.contrib.auth import get_user_model
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from mica.site.enrolment import enrolment_code_issue

    page.context.clear_cookies()
    admin = get_user_model().objects.create_superuser(
        f"first-admin-{lang}", f"admin-{lang}@example.org", PASSWORD
    )
    _record, code = enrolment_code_issue(user=admin, actor=None)
    page.goto(f"{site}{prefix}/admin/login/")
    page.fill("#id_username", admin.username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    page.fill("#id_enrolment_code", code)
    shoot(page, "deployers/01-enrolment-code", lang)
    with page.expect_navigation():
        page.click("#enrolment-code-form input[type=submit]")
    assert page.locator("#otp-qr-code svg").is_visible()
    shoot(page, "deployers/02-qr-code", lang)
    page.fill("#id_code", totp_code(TOTPDevice.objects.get(user=admin, confirmed=False)))
    with page.expect_navigation():
        page.click("#second-factor-form input[type=submit]")
    assert TOTPDevice.objects.filter(user=admin, confirmed=True).exists()
    shoot(page, "deployers/03-admin-index", lang)

    page.goto(f"{site}{prefix}/admin/jobs/jobrun/")
    assert "/login/" not in page.url
    shoot(page, "deployers/04-background-jobs", lang)
    page.goto(f"{site}/healthz/system")
    assert "problems" in page.inner_text("body")
    # A JSON answer, not a page: the browser's own viewer shows it.
    screenshot(page, "deployers/05-health", lang)
    assert page.goto(f"{site}{prefix}/downloads/").status == 200
    shoot(page, "deployers/06-downloads", lang)


@pytest.fixture
def built_manual(site, settings, tmp_path):
    """The manual built as `make docs` builds it, served by the live server."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    target = tmp_path / "docs"
    subprocess.run(
        [
            str(Path(sys.executable).with_name("mkdocs")),
            "build",
            "--quiet",
            "--site-dir",
            str(target),
        ],
        cwd=root,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=True,
        timeout=120,
    )
    settings.DOCS_DIR = target
    return site


def test_the_manual_runs_under_the_sites_policy_in_both_languages(watched, built_manual):
    """Material's scripts run by their digests (the language switch, the search), the
    screenshots load, and nothing breaks the Content-Security-Policy."""
    page, violations = watched
    site = built_manual
    visit(page, violations, f"{site}/docs/guides/authors/")
    shots = page.locator("article img")
    assert shots.count() >= 6
    assert page.evaluate(
        "[...document.querySelectorAll('article img')].every(i => i.complete && i.naturalWidth)"
    )
    # The language switch leads to the same page in Korean.
    korean = page.locator(".md-select a[hreflang=ko]").first.get_attribute("href")
    visit(page, violations, urljoin(page.url, korean))
    assert page.url == f"{site}/docs/ko/guides/authors/"
    assert page.locator("html").get_attribute("lang") == "ko"
    assert "저자" in page.inner_text("article h1")
    page.goto(f"{site}/docs/?q=enrolment")
    page.wait_for_selector(".md-search-result__item", timeout=15000)
    assert not violations(), violations()
    page.goto(f"{site}/ko/")
    with page.expect_navigation():
        page.locator("footer a[href='/docs/ko/']").click()
    assert page.locator("html").get_attribute("lang") == "ko"
    assert not violations(), violations()
