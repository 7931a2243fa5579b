"""The review desk people work in: messages, "request changes", comments, e-mails, queues."""

import pytest
from django.contrib.auth.models import Permission
from django.contrib.messages import get_messages
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from catalogue.models import (
    ContractClause,
    LocalReview,
    ReviewComment,
    ReviewEvent,
    ReviewState,
    TaskVersion,
)
from catalogue.selectors import review_deciders
from catalogue.services import review_comment_add, review_comment_resolve
from catalogue.workflows import review_transition
from markets.models import CompetenceRole, Market
from mica.errors import PermissionRefused, ValidationFailed
from mica.methodology.models import ChapterItem
from submissions.models import OutboxMessage
from tests.factories import (
    HOLDOUT_CANARY,
    StaffFactory,
    grant,
    holdout_keeper,
    holdout_task,
    references_registered,
)

pytestmark = pytest.mark.django_db

REVIEWS = "/admin/catalogue/localreview/"
REQUEST = "Name the Hometax confirmation screen in the final state."


def act(client, action, review, **data):
    return client.post(
        REVIEWS, {"action": action, "_selected_action": [review.pk], **data}, follow=True
    )


def shown(response):
    return [(m.level_tag, str(m)) for m in get_messages(response.wsgi_request)]


def submitted(review, people):
    return review_transition(review_id=review.pk, action="submit", actor=people["author"])


# --- Messages ------------------------------------------------------------------------


def test_a_review_is_named_by_its_market_code_and_the_message_quotes_the_new_state(
    client, people, kr_review, django_capture_on_commit_callbacks
):
    """Issue 19, item 4: "review names show "· 1 ·" instead of "· KR ·"; the approval
    message quotes the old state" — "one message per action, refusal or success, never
    both; market codes and states in words"."""
    submitted(kr_review, people)
    client.force_login(people["reviewer"])
    with django_capture_on_commit_callbacks(execute=True):
        response = act(client, "approve", kr_review)
    assert shown(response) == [
        ("success", f"Approved: {kr_review.version} · KR. It is now “Approved”.")
    ]
    assert " · KR · " in str(LocalReview.objects.select_related("market").get())
    listing = client.get(REVIEWS).text
    assert f"{kr_review.version} · KR · Approved" in listing
    assert f"· {kr_review.market_id} ·" not in listing


def test_a_refusal_is_the_only_message(client, people, kr_review):
    """Issue 19, item 4: "one message per action, refusal or success, never both"."""
    client.force_login(people["author"])
    submitted(kr_review, people)
    with translation.override("ko"):
        response = client.post(
            f"/ko{REVIEWS}", {"action": "approve", "_selected_action": [kr_review.pk]}, follow=True
        )
    messages = shown(response)
    assert len(messages) == 1 and messages[0][0] == "error"
    assert messages[0][1].endswith(f" ({kr_review.version} · KR)")
    assert "KR" in messages[0][1] and "검토자" in messages[0][1]
    assert LocalReview.objects.get().state == ReviewState.IN_REVIEW


# --- Needs changes ---------------------------------------------------------------------


def test_request_changes_carries_the_request_to_the_event_and_the_author(
    client, people, kr_review, django_capture_on_commit_callbacks, eager_celery
):
    """ARCHITECTURE: "A workflow is a table of (state, action) -> state and one function
    that locks the row ..., checks permission, moves the state and writes an append-only
    event in the same transaction"; issue 19: ""needs changes" with the request attached"."""
    submitted(kr_review, people)
    client.force_login(people["reviewer"])
    asked = act(client, "request_changes", kr_review)
    assert "The changes needed" in asked.text and not shown(asked)
    empty = act(client, "request_changes", kr_review, confirm="yes", reason="   ")
    assert 'aria-invalid="true"' in empty.text and not shown(empty)
    assert LocalReview.objects.get().state == ReviewState.IN_REVIEW

    with django_capture_on_commit_callbacks(execute=True):
        done = act(client, "request_changes", kr_review, confirm="yes", reason=REQUEST)
    assert shown(done) == [
        (
            "success",
            f"Changes requested on {kr_review.version} · KR. It is now “Changes requested”.",
        )
    ]
    event = ReviewEvent.objects.get(action="request_changes")
    assert (event.reason, event.actor, event.to_state) == (
        REQUEST,
        people["reviewer"],
        ReviewState.CHANGES_REQUESTED,
    )
    (message,) = [m for m in mail.outbox if "Changes requested" in m.subject]
    assert message.to == [people["author"].email]
    assert REQUEST in message.body and "수정 요청됨" in message.subject
    assert f"/admin/catalogue/localreview/{kr_review.pk}/change/" in message.body


def test_request_changes_without_a_request_is_refused_by_the_workflow(kr_review, people):
    """Issue 19: ""needs changes" with the request attached": none, no move."""
    submitted(kr_review, people)
    with pytest.raises(ValidationFailed):
        review_transition(
            review_id=kr_review.pk, action="request_changes", actor=people["reviewer"], reason=" "
        )
    assert LocalReview.objects.get().state == ReviewState.IN_REVIEW
    assert not ReviewEvent.objects.filter(action="request_changes").exists()


# --- Comments --------------------------------------------------------------------------


def a_section_id():
    return ChapterItem.objects.filter(edition__status="draft").order_by("pk").first().section_id


def test_comments_anchor_to_a_field_or_a_section_and_stay_when_resolved(people, kr_review):
    """Issue 19: "comments anchored to a field or section id that stay in the record when
    resolved"; every content record keeps its history (mica/history.py)."""
    on_field = review_comment_add(
        review=kr_review, anchor="final_state", body="Which screen?", actor=people["reviewer"]
    )
    on_section = review_comment_add(
        review=kr_review, anchor=a_section_id(), body="Cite the rule.", actor=people["author"]
    )
    review_comment_resolve(comment_id=on_field.pk, actor=people["author"])
    on_field.refresh_from_db()
    assert on_field.resolved and on_field.resolved_by == people["author"]
    assert list(kr_review.comments.order_by("pk")) == [on_field, on_section]
    assert on_field.history.count() == 2  # written, then resolved
    with pytest.raises(ValidationFailed, match="neither a field"):
        review_comment_add(
            review=kr_review, anchor="no-such-anchor", body="?", actor=people["author"]
        )
    with pytest.raises(PermissionRefused, match="KR"):
        review_comment_add(
            review=kr_review, anchor="title", body="From afar.", actor=people["jp_reviewer"]
        )
    assert ReviewComment.objects.count() == 2


def test_comments_in_the_admin(client, people, kr_review):
    """Issue 19: "comments anchored to a field or section id that stay in the record when
    resolved", in the review's own page, in either language."""
    page = f"{REVIEWS}{kr_review.pk}/change/"
    client.force_login(people["reviewer"])
    form = client.get(page)
    assert form.status_code == 200
    base = {
        "events-TOTAL_FORMS": "0",
        "events-INITIAL_FORMS": "0",
        "comments-TOTAL_FORMS": "0",
        "comments-INITIAL_FORMS": "0",
        "comments-2-TOTAL_FORMS": "1",
        "comments-2-INITIAL_FORMS": "0",
    }
    prefixes = [f.formset.prefix for f in form.context["inline_admin_formsets"]]
    assert prefixes == ["events", "comments", "comments-2"]
    bad = client.post(
        f"/ko{page}", {**base, "comments-2-0-anchor": "nowhere", "comments-2-0-body": "?"}
    )
    assert bad.status_code == 200 and "섹션 ID" in bad.text
    assert not ReviewComment.objects.exists()
    client.post(
        page, {**base, "comments-2-0-anchor": "title", "comments-2-0-body": "Say which office."}
    )
    comment = ReviewComment.objects.get()
    assert (comment.anchor, comment.author) == ("title", people["reviewer"])

    client.force_login(people["author"])
    resolved = client.post(
        page,
        {
            **base,
            "comments-TOTAL_FORMS": "1",
            "comments-INITIAL_FORMS": "1",
            "comments-0-id": comment.pk,
            "comments-0-review": kr_review.pk,
            "comments-0-resolve": "on",
            "comments-2-TOTAL_FORMS": "0",
        },
        follow=True,
    )
    assert resolved.status_code == 200
    comment.refresh_from_db()
    assert comment.resolved_by == people["author"]
    assert "Say which office." in client.get(page).text


# --- E-mails ---------------------------------------------------------------------------


def test_a_submitted_review_mails_the_people_who_can_decide_it(
    people, kr_review, django_capture_on_commit_callbacks, eager_celery
):
    """PORTAL: "An approval counts only from a reviewer competent for that market who is
    not the author and not an editor of the revision under review"; issue 19:
    "notification e-mails (through the existing outbox) to the people who can act"."""
    kr_review.version.editors.add(people["second_reviewer"])
    with django_capture_on_commit_callbacks(execute=True):
        submitted(kr_review, people)
    assert sorted(m.to for m in OutboxMessage.objects.all()) == [people["reviewer"].email]
    (message,) = mail.outbox
    assert str(kr_review.version) in message.body
    # The portal does not know a staff member's language: both, English first.
    assert message.body.index("you can decide it") < message.body.index("결정할 수 있습니다")
    assert "In review" in message.subject and "검토 중" in message.subject


# --- The holdout -----------------------------------------------------------------------


def submittable(version):
    """The holdout version with what a review cannot supply: axes, a whole contract and
    registered references."""
    TaskVersion.objects.filter(pk=version.pk).update(diagnostic_axes=["safety"])
    for kind in ("invariant", "prohibited"):
        ContractClause.objects.create(
            version=version, kind=kind, text_en=HOLDOUT_CANARY, text_ko=HOLDOUT_CANARY
        )
    return references_registered(version)


@pytest.fixture
def holdout_review(people, django_capture_on_commit_callbacks):
    """A holdout task in review in KR: its author and one reviewer hold the capability;
    people["reviewer"] does not."""
    definition = holdout_task()
    author = holdout_keeper("holdout-author")
    decider = holdout_keeper("holdout-reviewer")
    for person in (author, decider):
        person.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalogue"))
    grant(author, "KR", CompetenceRole.AUTHOR, people["lead"])
    grant(decider, "KR", CompetenceRole.REVIEWER, people["lead"])
    review = LocalReview.objects.create(
        version=submittable(TaskVersion.objects.get(definition=definition)),
        market=Market.objects.get(code="KR"),
        author=author,
    )
    with django_capture_on_commit_callbacks(execute=True):
        review_transition(review_id=review.pk, action="submit", actor=author)
        review_comment_add(review=review, anchor="final_state", body=HOLDOUT_CANARY, actor=decider)
        review_transition(
            review_id=review.pk,
            action="request_changes",
            actor=decider,
            reason=f"Quote: {HOLDOUT_CANARY}",
        )
        review_transition(review_id=review.pk, action="submit", actor=author)
    return review, author, decider, definition


def test_a_holdout_review_reaches_no_one_without_the_capability(
    client, people, holdout_review, django_capture_on_commit_callbacks
):
    """README: "Without both, a holdout task does not exist for them: not in the admin's
    lists, search, forms, history or translation status"; PORTAL: "Holdout items are
    unreachable from anything public: pages, API, search, sitemap, exports, error
    messages, emails"."""
    review, author, decider, definition = holdout_review
    messages = list(OutboxMessage.objects.all())
    assert sorted(m.to for m in messages) == sorted([decider.email, author.email, decider.email])
    for message in messages:
        text = message.subject + message.body
        assert HOLDOUT_CANARY not in text and definition.slug not in text
        assert "KR" in text and f"/{review.pk}/change/" in text

    client.force_login(people["reviewer"])
    for path in (
        "/admin/",
        f"{REVIEWS}?mine=review",
        REVIEWS,
        f"{REVIEWS}{review.pk}/change/",
        "/ko/admin/",
    ):
        response = client.get(path, follow=True)
        assert HOLDOUT_CANARY not in response.text and definition.slug not in response.text, path
    from mica.site.work_queues import work_queues

    def awaiting(person):
        queues = work_queues(type(person).objects.get(pk=person.pk))
        return next(q.count for q in queues if q.url.endswith("mine=review"))

    assert awaiting(people["reviewer"]) == 0
    assert awaiting(decider) == 1
    client.force_login(decider)
    assert definition.slug in client.get(f"{REVIEWS}?mine=review").text
    assert review_deciders(review) == [decider]

    # An author who no longer holds the capability hears nothing more of it.
    author.user_permissions.remove(Permission.objects.get(codename="view_holdout"))
    OutboxMessage.objects.all().delete()
    with django_capture_on_commit_callbacks(execute=True):
        review_transition(
            review_id=review.pk, action="request_changes", actor=decider, reason="Again."
        )
    assert not OutboxMessage.objects.exists()


# --- Queues ----------------------------------------------------------------------------


def test_the_index_counts_each_queue_in_a_constant_number_of_queries(
    client, people, task, canonical_content
):
    """ARCHITECTURE: "Query budgets: a list page runs a constant number of queries
    whatever its length"; issue 19: "queues per role with counts on the admin index"."""
    from catalogue.models import TaskDefinition
    from mica.site.work_queues import work_queues

    reviewer = people["reviewer"]
    reviewer.user_permissions.add(
        Permission.objects.get(codename="view_challenge"),
        Permission.objects.get(codename="change_chapteritem"),
    )

    def counted():
        person = type(reviewer).objects.get(pk=reviewer.pk)  # no permission cache
        with CaptureQueriesContext(connection) as queries:
            queues = work_queues(person)
        return {str(q.label): q.count for q in queues}, len(queries)

    before, queries_before = counted()
    assert before == {
        "Awaiting my review": 0,
        "Challenges on claims I own": 0,
        "Stale Korean translations": 0,
    }
    kr = Market.objects.get(code="KR")
    for definition in TaskDefinition.objects.filter(task_set="public")[:6]:
        review = LocalReview.objects.create(
            version=references_registered(definition.current_version),
            market=kr,
            author=people["author"],
        )
        submitted(review, people)
    # Four eyes: a revision the reviewer edited is not theirs to decide.
    review.version.editors.add(reviewer)
    after, queries_after = counted()
    assert after["Awaiting my review"] == 5
    assert queries_after == queries_before == 8

    client.force_login(people["author"])
    index = client.get("/admin/")
    assert "My drafts and reviews sent back" in index.text
    assert "Awaiting my review" not in index.text  # an author only: no deciding role
    korean = client.get("/ko/admin/")
    assert "내 작업" in korean.text


def test_challenges_on_claims_i_own(
    client, people, canonical_content, django_capture_on_commit_callbacks
):
    """Issue 19: "challenges on claims I own" — open (screened or triaged) challenges on
    the claims a person owns, counted and listed, and the owner told by e-mail when one
    becomes public."""
    from submissions.challenges import challenge_transition
    from tests.factories import confirmed_challenge

    owner = StaffFactory(username="claim-owner", app_permissions=("submissions",))
    challenge = confirmed_challenge()
    ChapterItem.objects.filter(edition=challenge.edition, section_id=challenge.section_id).update(
        owner=owner
    )
    from mica.site.work_queues import work_queues

    def count():
        queues = work_queues(type(owner).objects.get(pk=owner.pk))
        return next(q.count for q in queues if q.url.endswith("mine=owned"))

    assert count() == 0  # received: not yet screened
    with django_capture_on_commit_callbacks(execute=True):
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="In scope.", actor=people["lead"]
        )
    assert count() == 1
    (told,) = OutboxMessage.objects.filter(to=owner.email, subject__contains="a claim you own")
    # Issue 43, item 10: the subject names the claim by its title; the body keeps its id.
    assert challenge.section_id not in told.subject and challenge.section_id in told.body
    assert "담당하신 주장" in told.body
    assert f"/admin/submissions/challenge/{challenge.pk}/change/" in told.body
    client.force_login(owner)
    listing = client.get("/admin/submissions/challenge/?mine=owned")
    assert str(challenge) in listing.text
    client.force_login(StaffFactory(username="other", app_permissions=("submissions",)))
    assert str(challenge) not in client.get("/admin/submissions/challenge/?mine=owned").text


def test_stale_korean_translations(client, people, canonical_content):
    """mica.methodology.models: "A reviewer approves the Korean text against one English
    source ... Editing either side leaves the claim unapproved": such a claim is a stale
    translation, counted and listed."""
    from mica.site.work_queues import work_queues

    claim = ChapterItem.objects.filter(edition__status="draft", item_type="claim").first()
    editor = StaffFactory(username="editor", app_permissions=("methodology",))

    def count():
        queues = work_queues(type(editor).objects.get(pk=editor.pk))
        return next(q.count for q in queues if q.url.endswith("korean=stale"))

    assert count() == 0
    ChapterItem.objects.filter(pk=claim.pk).update(detail_en=claim.detail_en + " Edited.")
    assert count() == 1
    client.force_login(editor)
    listing = client.get("/admin/methodology/chapteritem/?korean=stale")
    assert listing.context["cl"].result_count == 1
