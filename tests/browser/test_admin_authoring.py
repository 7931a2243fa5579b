"""A task from authoring to its public page, by clicking through the admin.

Issue 19: "A task's life (draft → local review with four eyes → validated → current
version → public page, and retirement with a reason) runs as workflow actions in the
admin, each refusal stated in the editor's language."
PORTAL.md, Four-eyes review: "An approval counts only from a reviewer competent for
that market who is not the author and not an editor of the revision under review."
"""

import pytest

from tests.browser.conftest import assert_accessible
from tests.factories import (
    PASSWORD,
    LeadFactory,
    catalogue_editor,
    totp_code,
    totp_device,
)

pytestmark = pytest.mark.browser

SLUG = "ec-confirm-dentist-visit"
TITLE = {"en": "Confirm a dentist visit by e-mail", "ko": "치과 예약을 메일로 확정하기"}
FINAL = {
    "en": "The clinic has confirmed the visit in writing.",
    "ko": "병원이 예약을 글로 확정했습니다.",
}
BOUNDARY = {
    "en": "The agent sends the request only after the user approves it.",
    "ko": "에이전트는 사용자가 승인한 뒤에만 요청을 보냅니다.",
}
CLAUSES = [
    ("obligation", "The reply names the confirmed time.", "답장에 확정된 시각이 적혀 있습니다."),
    ("invariant", "Other appointments are unchanged.", "다른 예약은 바뀌지 않습니다."),
    ("prohibited", "Two visits are booked.", "예약이 두 건 잡힌 상태."),
]
MARKETS = ["KR", "JP", "SG", "TW", "AE", "TH"]


@pytest.fixture
def people(site):
    lead = LeadFactory(username="authoring-lead")
    totp_device(lead)
    # The author may also review Korea's tasks: only four eyes stop them approving this one.
    author = catalogue_editor("kr-author", ["AUTHOR", "REVIEWER"], lead)
    reviewer = catalogue_editor("kr-reviewer", ["REVIEWER"], lead)
    return {"lead": lead, "author": author, "reviewer": reviewer}


def sign_in(page, site, user, prefix=""):
    from django_otp.plugins.otp_totp.models import TOTPDevice

    page.context.clear_cookies()
    page.goto(f"{site}{prefix}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    device = TOTPDevice.objects.filter(user=user).first()
    if device is not None:
        page.fill("#id_code", totp_code(device))
        with page.expect_navigation():
            page.click("#second-factor-form input[type=submit]")


def save(page, button="input[name=_save]"):
    with page.expect_navigation():
        page.click(button)
    return (
        page.inner_text("#content-start, .messagelist")
        if page.locator(".messagelist").count()
        else ""
    )


def autocomplete(page, select_id, term):
    page.click(f"#{select_id} + .select2 .select2-selection")
    page.fill(".select2-search__field", term)
    page.locator(".select2-results__option", has_text=term).first.click()


def run_action(page, action, row_text):
    page.locator("#result_list tr", has_text=row_text).locator("input.action-select").check()
    page.select_option("select[name=action]", action)
    with page.expect_navigation():
        page.click("button[name=index]")
    return page.inner_text(".messagelist") if page.locator(".messagelist").count() else ""


def write_the_task(page, site):
    page.goto(f"{site}/admin/catalogue/taskdefinition/add/")
    page.fill("#id_slug", SLUG)
    page.select_option("#id_family", label=family_label("email-calendar"))
    page.fill("#id_position", "50")
    save(page)

    page.goto(f"{site}/admin/catalogue/taskversion/add/")
    autocomplete(page, "id_definition", SLUG)
    page.fill("#id_version", "1.0.0")
    for lang in ("en", "ko"):
        page.fill(f"#id_title_{lang}", TITLE[lang])
        page.fill(f"#id_final_state_{lang}", FINAL[lang])
        page.fill(f"#id_confirmation_boundary_{lang}", BOUNDARY[lang])
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
    page.fill("#id_parameter_schema-0-description_en", "Days until the visit.")
    page.fill("#id_parameter_schema-0-description_ko", "방문까지 남은 일수입니다.")
    page.select_option("#id_reference_status", "registered")
    page.fill("#id_reference_sample_size", "12")
    page.fill("#id_speed_reference_seconds", "300")
    page.fill("#id_cost_reference_usd", "0.2000")
    for index, (kind, en, ko) in enumerate(CLAUSES):
        page.locator(".add-row a", has_text="contract clause").click()
        page.select_option(f"#id_clauses-{index}-kind", kind)
        page.fill(f"#id_clauses-{index}-text_en", en)
        page.fill(f"#id_clauses-{index}-text_ko", ko)
    for index, code in enumerate(MARKETS):
        page.locator(".add-row a", has_text="market applicability").click()
        page.select_option(f"#id_applicability-{index}-market", label=code_label(code))
        status = "applicable" if code == "KR" else "not-applicable"
        page.select_option(f"#id_applicability-{index}-status", status)
        page.fill(f"#id_applicability-{index}-note_en", f"Written for {code}.")
        page.fill(f"#id_applicability-{index}-note_ko", f"{code} 기준으로 썼습니다.")
    assert_accessible(page)
    message = save(page)
    assert "was added successfully" in message, page.inner_text("#content-main")[:3000]


def family_label(slug):
    from catalogue.models import TaskFamily

    return TaskFamily.objects.get(slug=slug).label_en


def code_label(code):
    from markets.models import Market

    return str(Market.objects.get(code=code))


def test_a_task_goes_from_the_authors_hands_to_its_public_page(page, site, people):
    from catalogue.models import LocalReview, TaskDefinition, TaskEvent

    sign_in(page, site, people["author"])
    write_the_task(page, site)

    page.goto(f"{site}/admin/catalogue/localreview/add/")
    autocomplete(page, "id_version", SLUG)
    page.select_option("#id_market", label=code_label("KR"))
    assert_accessible(page)
    save(page)
    page.goto(f"{site}/admin/catalogue/localreview/")
    assert "It is now “In review”" in run_action(page, "submit", SLUG)
    refused = run_action(page, "approve", SLUG)
    assert "Nobody reviews their own work" in refused
    assert LocalReview.objects.get(version__definition__slug=SLUG).state == "in-review"

    sign_in(page, site, people["reviewer"], prefix="/ko")
    page.goto(f"{site}/ko/admin/catalogue/localreview/")
    approved = run_action(page, "approve", SLUG)
    assert LocalReview.objects.get(version__definition__slug=SLUG).state == "approved", approved
    assert "승인했습니다" in approved

    sign_in(page, site, people["lead"])
    page.goto(f"{site}/admin/catalogue/taskversion/?q={SLUG}")
    refused = run_action(page, "make_current", SLUG)
    assert "promote the task first" in refused
    assert "is validated" in run_action(page, "promote_task", SLUG)
    assert "is now current" in run_action(page, "make_current", SLUG)
    task = TaskDefinition.objects.get(slug=SLUG)
    assert task.lifecycle == "validated" and task.current_version.version == "1.0.0"
    assert [e.action for e in TaskEvent.objects.filter(definition=task)] == [
        "promote",
        "make_current",
    ]

    for prefix, lang in (("", "en"), ("/ko", "ko")):
        response = page.goto(f"{site}{prefix}/tasks/{SLUG}/")
        assert response.status == 200
        text = page.inner_text("main")
        assert (
            TITLE[lang] in text
            and FINAL[lang] in text
            and CLAUSES[0][1 if lang == "en" else 2] in text
        )

    for prefix in ("", "/ko"):
        page.goto(f"{site}{prefix}/admin/catalogue/taskversion/{task.current_version_id}/change/")
        assert_accessible(page)
        page.goto(f"{site}{prefix}/admin/catalogue/taskversion/add/")
        assert_accessible(page)
        page.goto(f"{site}{prefix}/admin/catalogue/localreview/add/")
        assert_accessible(page)
        page.goto(f"{site}{prefix}/admin/catalogue/taskdefinition/{task.pk}/change/")
        assert_accessible(page)

    # Validated, the version is frozen: its page has no save, and its one action starts a
    # new version from it (issue 41: "One version, one text, forever").
    page.goto(f"{site}/admin/catalogue/taskversion/{task.current_version_id}/change/")
    assert page.locator("input[name=_save]").count() == 0
    assert "This version is frozen" in page.inner_text("#content-main")
    with page.expect_navigation():
        page.click("#start-next-version")
    assert "is a new draft copied from" in page.inner_text(".messagelist")
    assert_accessible(page)
    page.fill("#id_title_en", "A draft nobody has reviewed yet")
    assert "was changed successfully" in save(page)
    for prefix in ("", "/ko"):
        page.goto(f"{site}{prefix}/tasks/{SLUG}/")
        shown = page.inner_text("main")
        assert TITLE["en" if not prefix else "ko"] in shown
        assert "A draft nobody has reviewed yet" not in shown and "1.1.0" not in shown


def test_retirement_asks_for_a_reason_and_takes_the_task_out_of_the_catalogue(page, site, people):
    from catalogue.models import TaskDefinition

    task = TaskDefinition.objects.get(slug="ec-reschedule-three-party")
    sign_in(page, site, people["lead"])
    page.goto(f"{site}/admin/catalogue/taskdefinition/?q={task.slug}")
    run_action(page, "retire", task.slug)
    assert_accessible(page)
    page.goto(f"{site}/ko/admin/catalogue/taskdefinition/?q={task.slug}")
    run_action(page, "retire", task.slug)
    assert_accessible(page)
    assert page.locator("#id_reason[required]").count() == 1  # no reason, no retirement
    page.fill("#id_reason", "중복 과제로 확인되어 폐기합니다.")
    with page.expect_navigation():
        page.click("input[type=submit][value]")
    assert "폐기" in page.inner_text(".messagelist")
    task.refresh_from_db()
    assert task.lifecycle == "retired"
    assert task.events.get().reason == "중복 과제로 확인되어 폐기합니다."
    page.goto(f"{site}/tasks/")
    assert f"/tasks/{task.slug}/" not in page.content()
    assert page.goto(f"{site}/tasks/{task.slug}/").status == 200  # its page and history stay
