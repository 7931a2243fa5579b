"""The API reference's console in Chromium, under the page's Content-Security-Policy.

Issue 19, item 5: "`/api/docs/` lets an operator try `POST /api/v1/attempts/` with
their token." The operator pastes a token, sends the schema's example batch and reads the
answer; in Korean, a refused example answers in Korean. No policy violation, and axe
finds nothing on the console with its answer shown.
"""

import json

import pytest

from submissions.api.examples import ATTEMPT, SYSTEM_SUBMISSION, VALID_BATCH
from submissions.models import Attempt
from tests.browser.conftest import assert_accessible
from tests.browser.test_content_security_policy import watched  # noqa: F401 - a fixture
from tests.factories import SnapshotFactory, SystemFactory, UserFactory, api_token

pytestmark = pytest.mark.browser


@pytest.fixture
def operator_token(site):
    """The operator of the snapshot the schema's examples name, with their token."""
    operator = UserFactory(username="harbor-ops")
    SnapshotFactory(
        system=SystemFactory(slug=ATTEMPT["snapshot"]["system"], operator_account=operator),
        version=ATTEMPT["snapshot"]["version"],
        routable_models=SYSTEM_SUBMISSION["routable_models"],
        tools=SYSTEM_SUBMISSION["tools"],
    )
    return api_token(operator)


def send(page, token, example=None):
    page.fill("#try-token", token)
    if example:
        page.select_option("#try-example", example)
    page.click(".try-console button[type=submit]")
    page.wait_for_selector("#try-answer:not([hidden])")
    return page.locator("#try-status").inner_text(), json.loads(page.inner_text("#try-answer"))


def test_an_operator_tries_the_example_batch_from_the_reference_page_storing_nothing(
    watched,  # noqa: F811 - the fixture imported above
    site,
    operator_token,
):
    page, violations = watched
    page.goto(f"{site}/api/docs/#try-attempts")
    assert page.locator(".try-console").is_visible()
    assert not page.locator(".try-needs-script").is_visible()
    assert json.loads(page.input_value("#try-body")) == VALID_BATCH

    # Issue 34, item 5: the console is a dry run. The answer is the real call's, and
    # nothing is recorded on the operator's snapshot.
    status, answer = send(page, operator_token)
    assert "201" in status and answer["recorded"] == len(VALID_BATCH) and answer["dry_run"]
    assert "dry_run=1" in page.inner_text("#try-attempts")
    assert Attempt.objects.count() == 0
    assert_accessible(page)
    assert not violations()

    # A wrong token is refused, and nothing is recorded.
    status, answer = send(page, "not-a-token")
    assert "401" in status and answer == {"detail": "Invalid token."}

    page.goto(f"{site}/ko/api/docs/#try-attempts")
    status, answer = send(page, operator_token, example="Success-without-proof")
    assert "400" in status and answer["errors"]["rule"] == ["success-without-proof"]
    assert answer["detail"].startswith("확인된 성공")
    assert "API 응답 상태 코드 400" in status
    assert_accessible(page)
    assert not violations()
    assert Attempt.objects.count() == 0
