"""Local review under four eyes: every pair, competence, hash voiding, concurrency."""

import threading

import pytest
from django.db import connection

from catalogue.models import LocalReview, ReviewEvent, ReviewState
from catalogue.services import review_open, task_version_touch
from catalogue.workflows import REVIEW_TRANSITIONS, review_transition
from markets.models import Market
from mica.errors import InvalidTransition, PermissionRefused
from tests.support import require

pytestmark = pytest.mark.django_db

ACTIONS = sorted({action for _state, action in REVIEW_TRANSITIONS})
# What a reviewer writes when sending a review back ("needs changes" carries its request).
REQUEST = "Name the Hometax confirmation screen in the final state."
ROLE_FOR_ACTION = {action: move.role for (_state, action), move in REVIEW_TRANSITIONS.items()}


def actor_for(action, people):
    return {"author": people["author"], "reviewer": people["reviewer"], "system": None}[
        ROLE_FOR_ACTION[action]
    ]


@pytest.mark.parametrize("state", list(ReviewState))
@pytest.mark.parametrize("action", ACTIONS)
def test_every_pair(kr_review, people, state, action):
    LocalReview.objects.filter(pk=kr_review.pk).update(state=state, approved_hash="x" * 64)
    move = REVIEW_TRANSITIONS.get((state, action))
    expected = move and move.target
    if move is None:
        with pytest.raises(InvalidTransition):
            review_transition(
                review_id=kr_review.pk,
                action=action,
                actor=actor_for(action, people),
                reason=REQUEST,
            )
        assert LocalReview.objects.get(pk=kr_review.pk).state == state
        assert not ReviewEvent.objects.exists()
    else:
        moved = review_transition(
            review_id=kr_review.pk, action=action, actor=actor_for(action, people), reason=REQUEST
        )
        assert moved.state == expected
        event = ReviewEvent.objects.get()
        assert (event.from_state, event.to_state, event.action) == (state, expected, action)


def submitted(kr_review, people):
    return review_transition(review_id=kr_review.pk, action="submit", actor=people["author"])


def test_an_author_cannot_approve_their_own_work(kr_review, people):
    submitted(kr_review, people)
    from markets.models import CompetenceRole, MarketCompetence

    MarketCompetence.objects.filter(user=people["author"]).update(role=CompetenceRole.LEAD)
    with pytest.raises(PermissionRefused, match="own work"):
        review_transition(review_id=kr_review.pk, action="approve", actor=people["author"])


def test_an_editor_of_the_revision_cannot_approve(kr_review, people):
    submitted(kr_review, people)
    kr_review.version.editors.add(people["reviewer"])
    with pytest.raises(PermissionRefused, match="edited"):
        review_transition(review_id=kr_review.pk, action="approve", actor=people["reviewer"])


def test_a_reviewer_of_another_market_cannot_approve(kr_review, people):
    submitted(kr_review, people)
    with pytest.raises(PermissionRefused, match="KR"):
        review_transition(review_id=kr_review.pk, action="approve", actor=people["jp_reviewer"])


def test_a_superuser_is_no_reviewer_without_competence(kr_review, people):
    submitted(kr_review, people)
    with pytest.raises(PermissionRefused):
        review_transition(review_id=kr_review.pk, action="approve", actor=people["lead"])


def test_only_a_competent_author_opens_and_submits(people, task):
    kr = Market.objects.get(code="KR")
    with pytest.raises(PermissionRefused):
        review_open(version=task.current_version, market=kr, actor=people["reviewer"])
    review = review_open(version=task.current_version, market=kr, actor=people["author"])
    with pytest.raises(InvalidTransition):
        review_open(version=task.current_version, market=kr, actor=people["author"])
    with pytest.raises(PermissionRefused):
        review_transition(review_id=review.pk, action="submit", actor=people["reviewer"])


def test_approval_pins_the_hash_and_any_edit_voids_it(kr_review, people):
    submitted(kr_review, people)
    approved = review_transition(review_id=kr_review.pk, action="approve", actor=people["reviewer"])
    assert approved.state == ReviewState.APPROVED and len(approved.approved_hash) == 64
    version = kr_review.version
    task_version_touch(version=version, actor=people["author"])  # no change, nothing voided
    assert LocalReview.objects.get(pk=kr_review.pk).state == ReviewState.APPROVED
    version.title_ko = version.title_ko + " (수정)"
    version.save()
    task_version_touch(version=version, actor=people["author"])
    assert LocalReview.objects.get(pk=kr_review.pk).state == ReviewState.VOIDED
    assert ReviewEvent.objects.filter(review=kr_review, action="void").exists()
    # A fresh review can open once the approval is void.
    review_open(version=version, market=kr_review.market, actor=people["author"])


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_reviewers_approving_at_once_yield_one_approval(kr_review, people):
    require(connection.vendor == "postgresql", "row locks are tested on PostgreSQL")
    submitted(kr_review, people)
    barrier = threading.Barrier(2)
    outcomes = []

    def approve(reviewer):
        try:
            barrier.wait()
            review_transition(review_id=kr_review.pk, action="approve", actor=reviewer)
            outcomes.append("approved")
        except InvalidTransition:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [
        threading.Thread(target=approve, args=(people[name],))
        for name in ("reviewer", "second_reviewer")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["approved", "refused"]
    assert ReviewEvent.objects.filter(review=kr_review, action="approve").count() == 1
