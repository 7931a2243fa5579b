"""The four decision workflows share one idiom: a table of Moves and an event row per decision."""

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import RequestFactory

from catalogue.models import LocalReview, ReviewEvent
from catalogue.workflows import REVIEW_TRANSITIONS
from governance.models import Appeal, AppealEvent
from governance.services import APPEAL_TRANSITIONS
from mica.workflows import DecisionEvent, Move
from submissions.challenges import CHALLENGE_TRANSITIONS
from submissions.models import Challenge, ChallengeEvent, SystemSubmission, SystemSubmissionEvent
from submissions.system_submissions import SUBMISSION_TRANSITIONS

WORKFLOWS = [
    (LocalReview, ReviewEvent, REVIEW_TRANSITIONS),
    (Challenge, ChallengeEvent, CHALLENGE_TRANSITIONS),
    (Appeal, AppealEvent, APPEAL_TRANSITIONS),
    (SystemSubmission, SystemSubmissionEvent, SUBMISSION_TRANSITIONS),
]


@pytest.mark.parametrize(
    ("record", "event", "table"), WORKFLOWS, ids=lambda v: getattr(v, "__name__", "")
)
def test_every_workflow_is_a_table_of_moves_with_decision_events(record, event, table):
    assert issubclass(event, DecisionEvent)
    assert event._meta.get_field("role") and event._meta.get_field("reason")
    assert table, "a workflow with no moves checks nothing"
    states = {value for value, _label in record._meta.get_field("state").choices}
    for (source, _action), move in table.items():
        assert isinstance(move, Move)
        assert source in states and move.target in states


def test_the_review_admin_offers_exactly_the_moves_staff_take():
    """Authors submit and reviewers decide in the admin; voiding is the system's alone."""
    offered = set(admin.site._registry[LocalReview].get_actions(_superuser_request()))
    staff_moves = {action for (_s, action), move in REVIEW_TRANSITIONS.items()}
    assert staff_moves - {"void"} <= offered
    assert "void" not in offered


def _superuser_request():
    request = RequestFactory().get("/admin/catalogue/localreview/")
    request.user = User(is_superuser=True, is_staff=True, is_active=True)
    return request
