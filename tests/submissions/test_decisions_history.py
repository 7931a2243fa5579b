"""Decisions on an attempt are a history (issue 44, item 3): staff invalidate it, reverse
the invalidation, invalidate it again and reverse again, as many times as the evidence
asks, each decision a new row with its reason, the latest in force, each recomputing the
cell. Before, an attempt whose invalidation was reversed could never be invalidated again:
the admin answered "already invalidated" while the attempt counted.

Seed: "A figure that cannot be walked back along this chain is not published." The
figures follow the decision in force, and every decision stays in the record.
"""

import pytest
from mica_verify.cells import counted

from governance.selectors import cell_list
from mica.errors import InvalidTransition
from mica.exports.attempts import HoldoutNumbers, _attempt_rows, attempt_document_row
from submissions.invalidation import attempt_invalidate, invalidation_reverse
from submissions.models import Attempt, AttemptInvalidation, InvalidationReversal
from tests.factories import LeadFactory, attempts_post, publishable_world
from tests.factories import independent_rerun as rerun

# Recording the attempts reaches the record's triggers, which differ by database.
pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

CHANGELIST = "/admin/submissions/attempt/"


@pytest.fixture
def attempt(client, staff, canonical_content, django_capture_on_commit_callbacks):
    """Two independent reruns that make the cell's figures; the first is decided on."""
    publishable_world()
    with django_capture_on_commit_callbacks(execute=True):
        assert attempts_post(client, staff, [rerun(1), rerun(2)]).status_code == 201
    return Attempt.objects.get(attempt_id="acme-kr-001")


@pytest.fixture
def lead(client):
    user = LeadFactory()
    client.force_login(user)
    return user


def decide(client, capture, attempt, action, reason):
    """The admin's action on the attempt, confirmed with its reason, after-commit callbacks
    run; the messages it answered with."""
    with capture(execute=True):
        answer = client.post(
            CHANGELIST,
            {
                "action": action,
                "_selected_action": [attempt.pk],
                "confirm": "yes",
                "reason": reason,
            },
            follow=True,
        )
    assert answer.status_code == 200
    return [str(message) for message in answer.context["messages"]]


def public_runs(client):
    """The cell's eligible and invalid runs as its public evidence page states them."""
    cell = cell_list().get()
    page = client.get(f"/evidence/{cell.cell_id}/").text
    return cell.eligible_runs, cell.invalid_runs, page


def exported(attempt):
    """The attempt as mica-attempts.json lists it, and whether mica_verify counts it."""
    (row,) = [row for row in _attempt_rows() if row["pk"] == attempt.pk]
    document = attempt_document_row(row, HoldoutNumbers())
    return document["invalidation"], counted(document)


def test_invalidate_reverse_invalidate_reverse_each_moves_the_public_figures(
    client, attempt, lead, django_capture_on_commit_callbacks
):
    """Each decision taken in the admin recomputes the cell, and the public evidence page,
    the export and the verifier all follow the latest one."""
    capture = django_capture_on_commit_callbacks
    counts = "Attempts that passed screening and are valid; ineligible: 0, invalid: %d."
    assert public_runs(client)[:2] == (2, 0)

    steps = [
        ("invalidate", "A replayed run.", "acme-kr-001 is invalidated.", (1, 1), "invalidated"),
        ("reverse_invalidation", "Ours.", "acme-kr-001 counts again.", (2, 0), "reversed"),
        ("invalidate", "Replayed after all.", "acme-kr-001 is invalidated.", (1, 1), "invalidated"),
        ("reverse_invalidation", "Re-checked.", "acme-kr-001 counts again.", (2, 0), "reversed"),
    ]
    for action, reason, said, figures, status in steps:
        assert decide(client, capture, attempt, action, reason) == [said]
        eligible, invalid, page = public_runs(client)
        assert (eligible, invalid) == figures, action
        assert counts % invalid in page
        assert exported(attempt) == (status, status == "reversed")
        assert Attempt.objects.get(pk=attempt.pk).scored_eligible == (status == "reversed")

    # Every decision is kept, oldest first, each reversal naming the invalidation it undid.
    invalidations = list(AttemptInvalidation.objects.filter(attempt=attempt).order_by("pk"))
    assert [i.reason for i in invalidations] == ["A replayed run.", "Replayed after all."]
    assert [i.reversal.reason for i in invalidations] == ["Ours.", "Re-checked."]
    assert InvalidationReversal.objects.count() == 2


def test_the_admin_says_which_decision_is_in_force(
    client, attempt, lead, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    change = f"{CHANGELIST}{attempt.pk}/change/"
    assert "None: the attempt was never invalidated." in client.get(change).text

    decide(client, capture, attempt, "invalidate", "A replayed run.")
    decide(client, capture, attempt, "reverse_invalidation", "Ours.")
    page = client.get(change).text
    assert "the attempt is no longer invalidated." in page and "Ours." in page

    decide(client, capture, attempt, "invalidate", "Replayed after all.")
    page = client.get(change).text
    assert "the attempt does not count." in page and "Replayed after all." in page
    # Both invalidations are listed, the first with its reversal.
    assert "A replayed run." in page and "Ours." in page
    # The list's "invalidated" column reads the decision in force, for each attempt.
    listing = client.get(CHANGELIST).context["cl"].result_list
    assert {a.attempt_id: a.invalidation_in_force for a in listing} == {
        "acme-kr-001": True,
        "acme-kr-002": False,
    }


def test_a_decision_already_in_force_is_refused_in_words(
    client, attempt, lead, staff, django_capture_on_commit_callbacks
):
    """Invalidating what stands invalidated, or reversing what stands reversed, is refused;
    the refusal is true of the decision in force."""
    capture = django_capture_on_commit_callbacks
    decide(client, capture, attempt, "invalidate", "A replayed run.")
    assert decide(client, capture, attempt, "invalidate", "Twice.") == [
        "acme-kr-001: Attempt acme-kr-001 is already invalidated."
    ]
    decide(client, capture, attempt, "reverse_invalidation", "Ours.")
    assert decide(client, capture, attempt, "reverse_invalidation", "Twice.") == [
        "acme-kr-001: Attempt acme-kr-001 is not invalidated: there is nothing to reverse."
    ]
    assert (AttemptInvalidation.objects.count(), InvalidationReversal.objects.count()) == (1, 1)
    with pytest.raises(InvalidTransition):
        invalidation_reverse(attempt_id=attempt.pk, reason="Again.", actor=staff)
    attempt_invalidate(attempt_id=attempt.pk, reason="New evidence.", actor=staff)
    with pytest.raises(InvalidTransition):
        attempt_invalidate(attempt_id=attempt.pk, reason="Again.", actor=staff)


def test_the_korean_admin_says_the_decision_in_force_in_korean(
    client, attempt, lead, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    decide(client, capture, attempt, "invalidate", "A replayed run.")
    decide(client, capture, attempt, "reverse_invalidation", "Ours.")
    page = client.get(f"/ko{CHANGELIST}{attempt.pk}/change/").text
    assert "현재 효력 있는 결정" in page
    assert "무효화 번복: 이 시도는 더 이상 무효가 아닙니다." in page
    decide(client, capture, attempt, "invalidate", "Replayed after all.")
    page = client.get(f"/ko{CHANGELIST}{attempt.pk}/change/").text
    assert "무효화됨: 이 시도는 집계되지 않습니다." in page
