"""The API reference's console in Chromium, under the page's Content-Security-Policy.

Issue 19, item 5: "`/api/docs/` lets an operator try `POST /api/v1/attempts/` with
their token." The operator pastes a token, sends the schema's example batch and reads the
answer; in Korean, a refused example answers in Korean. No policy violation, and axe
finds nothing on the console with its answer shown.
"""

import json

import pytest

from submissions.api.examples import VALID_BATCH
from submissions.models import Attempt
from tests.browser.conftest import assert_accessible
from tests.browser.test_content_security_policy import watched  # noqa: F401 - a fixture
from tests.factories import UserFactory, api_token

pytestmark = pytest.mark.browser


@pytest.fixture
def operator_token(site):
    """A new operator's token on a fresh install: no snapshot of theirs, nothing recorded;
    the console's sandbox stages the examples' world for each call."""
    return api_token(UserFactory(username="new-operator"))


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

    # Issue 34, item 5: the console is a dry run in the examples' sandbox. The answer is
    # the real call's there, and nothing is recorded on any snapshot.
    status, answer = send(page, operator_token)
    assert "201" in status and answer["recorded"] == len(VALID_BATCH)
    assert answer["dry_run"] and answer["sandbox"]
    assert "sandbox=1" in page.inner_text("#try-attempts")
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
    # The examples that need the story's state answer as documented there too.
    for example in ("Attempt-id-reused", "Not-own-snapshot", "Platform-superseded"):
        status, answer = send(page, operator_token, example=example)
        assert "400" in status or "403" in status, example
        assert answer["errors"]["rule"] == [example.lower()]
    assert_accessible(page)
    assert not violations()
    assert Attempt.objects.count() == 0
