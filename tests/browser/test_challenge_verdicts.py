"""The public register of challenges with a recomputed scoring challenge: its verdict and
figures as a reader sees them, accessible and reflowing in both languages."""

import pytest

from tests.browser.conftest import assert_accessible, assert_reflows

pytestmark = pytest.mark.browser


@pytest.fixture
def recomputed(site):
    """A scoring challenge (p50 latency, 6.7 s claimed) recomputed and screened."""
    from submissions.challenges import (
        challenge_confirm,
        challenge_file,
        challenge_recompute,
        challenge_transition,
        confirmation_token,
    )
    from tests.factories import StaffFactory, challenge_payload

    challenge, _created = challenge_file(
        payload=challenge_payload(
            challenge_type="scoring",
            citations=[],
            claimed_metric="p50-latency",
            claimed_value=6.7,
            scoring_inputs={
                "eligible_runs": 4,
                "successes": 2,
                "success_latencies_seconds": [6.6, 6.8],
                "total_cost_usd": "0.3",
            },
        )
    )
    challenge_recompute(challenge_id=challenge.pk)
    challenge_confirm(token=confirmation_token(challenge))
    challenge_transition(
        challenge_id=challenge.pk, action="screen", reason="In scope.", actor=StaffFactory()
    )
    return challenge


def test_the_list_shows_the_verdict_accessibly_in_both_languages(page, site, recomputed):
    for prefix, verdict in (("", "Reproduced"), ("/ko", "재현됨")):
        page.goto(f"{site}{prefix}/challenges/")
        row = page.locator("tbody tr").first.inner_text()
        assert verdict in row and "6.7" in row and "6.699" not in row
        assert_accessible(page)


def test_the_list_reflows_at_320_px(narrow_page, site, recomputed):
    for prefix in ("", "/ko"):
        assert_reflows(narrow_page, f"{site}{prefix}/challenges/")
