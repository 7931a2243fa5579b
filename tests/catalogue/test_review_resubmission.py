"""No dead ends in the review desk (issue 34, item 2).

PORTAL.md, Four-eyes review: "An approval counts only from a reviewer competent for that
market who is not the author and not an editor of the revision under review; any edit
after approval voids it (approval pins a content hash)." A voided approval is resubmitted
with its comments; the author's queue counts it; the editor who voided it is told what to
do; the public page shows only the approval in force; comments are anchored from a list;
challenges and their notices reach the people who can act.
"""

import pytest
from django.contrib.messages import get_messages
from django.core import mail

from catalogue.models import LocalReview, ReviewComment, ReviewState, TaskVersion
from catalogue.rules import task_promotion_gaps
from catalogue.services import review_comment_add, review_open, task_version_touch
from catalogue.workflows import review_transition
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from mica.methodology.models import ChapterItem
from submissions.models import OutboxMessage
from tests.census import form_data
from tests.factories import LeadFactory, StaffFactory, confirmed_challenge

pytestmark = pytest.mark.django_db

REVIEWS = "/admin/catalogue/localreview/"
VERSIONS = "/admin/catalogue/taskversion/"


def approved(review, people):
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    return review_transition(review_id=review.pk, action="approve", actor=people["reviewer"])


def edited(version, people, title="An edit after the approval"):
    """An author's edit of the version, as the admin records it."""
    TaskVersion.objects.filter(pk=version.pk).update(title_en=title)
    return task_version_touch(
        version=TaskVersion.objects.get(pk=version.pk), actor=people["author"]
    )


def drafts_count(person):
    from mica.site.work_queues import work_queues

    queues = work_queues(type(person).objects.get(pk=person.pk))
    return next(q.count for q in queues if q.url.endswith("mine=drafts"))


def test_a_voided_review_is_resubmitted_with_its_comments_and_approved_again(
    kr_review, people, django_capture_on_commit_callbacks, eager_celery
):
    """Issue 34, item 2: "A voided review can be resubmitted (or a new round opens from it
    with one action, carrying its comments)"; the new approval pins the new content."""
    comment = review_comment_add(
        review=kr_review, anchor="final_state", body="Which office?", actor=people["reviewer"]
    )
    approved(kr_review, people)
    version = edited(kr_review.version, people)
    assert LocalReview.objects.get(pk=kr_review.pk).state == ReviewState.VOIDED
    assert "no approved local review in KR" in task_promotion_gaps(version.definition, version)

    with pytest.raises(PermissionRefused):
        review_transition(review_id=kr_review.pk, action="resubmit", actor=people["reviewer"])
    with django_capture_on_commit_callbacks(execute=True):
        moved = review_transition(review_id=kr_review.pk, action="resubmit", actor=people["author"])
    assert (moved.state, moved.reviewer, moved.approved_hash) == (ReviewState.IN_REVIEW, None, "")
    assert list(moved.comments.all()) == [comment]
    # The people who may decide it are told it waits again, in English and Korean.
    told = [m for m in mail.outbox if "edited after its approval" in m.body]
    assert sorted(m.to[0] for m in told) == sorted(
        [people["reviewer"].email, people["second_reviewer"].email]
    )
    assert "수정된 과제가 다시 현지 검토를 기다립니다" in told[0].body

    again = review_transition(
        review_id=kr_review.pk, action="approve", actor=people["second_reviewer"]
    )
    assert again.state == ReviewState.APPROVED
    assert again.approved_hash == TaskVersion.objects.get(pk=version.pk).content_hash
    assert "no approved local review in KR" not in task_promotion_gaps(
        version.definition, TaskVersion.objects.get(pk=version.pk)
    )
    assert list(kr_review.events.values_list("action", flat=True)) == [
        "submit",
        "approve",
        "void",
        "resubmit",
        "approve",
    ]


def test_resubmission_is_refused_beside_another_open_round(kr_review, people):
    """One open review of a version in a market at a time: a voided review whose place a
    new review took is not reopened beside it."""
    approved(kr_review, people)
    edited(kr_review.version, people)
    review_open(version=kr_review.version, market=kr_review.market, actor=people["author"])
    with pytest.raises(InvalidTransition, match="already has an open review in KR"):
        review_transition(review_id=kr_review.pk, action="resubmit", actor=people["author"])
    assert LocalReview.objects.get(pk=kr_review.pk).state == ReviewState.VOIDED


def test_a_resubmission_meets_the_rules_a_review_cannot_meet(kr_review, people):
    """Issue 34, item 1: a review goes to a reviewer only while the rules it would not fix
    are met; resubmitting is submitting again, judged the same way."""
    approved(kr_review, people)
    TaskVersion.objects.filter(pk=kr_review.version_id).update(
        reference_status="calibration-pending",
        reference_sample_size=0,
        speed_reference_seconds=None,
        cost_reference_usd=None,
    )
    task_version_touch(version=TaskVersion.objects.get(pk=kr_review.version_id))
    with pytest.raises(ValidationFailed, match="references are still calibration-pending"):
        review_transition(review_id=kr_review.pk, action="resubmit", actor=people["author"])
    assert LocalReview.objects.get(pk=kr_review.pk).state == ReviewState.VOIDED


def test_the_authors_queue_counts_a_voided_review_as_sent_back(kr_review, people):
    """Issue 34, item 2: "the author's queue counts it as sent back", until a later round
    of the same version and market takes its place."""
    author = people["author"]
    approved(kr_review, people)
    assert drafts_count(author) == 0
    edited(kr_review.version, people)
    assert drafts_count(author) == 1
    review_transition(review_id=kr_review.pk, action="resubmit", actor=author)
    assert drafts_count(author) == 0
    LocalReview.objects.filter(pk=kr_review.pk).update(state=ReviewState.VOIDED)
    newer = review_open(version=kr_review.version, market=kr_review.market, actor=author)
    assert drafts_count(author) == 1  # the new draft, not the voided one beside it
    LocalReview.objects.filter(pk=newer.pk).delete()
    assert drafts_count(author) == 1  # the voided one again


def test_the_save_that_voids_an_approval_says_so_and_what_to_do(client, kr_review, people):
    """Issue 34, item 2: "the save message says that the edit voided the approval and
    what to do", in the editor's language."""
    approved(kr_review, people)
    version = kr_review.version
    url = f"{VERSIONS}{version.pk}/change/"
    client.force_login(people["lead"])
    for prefix, title, expected in [
        ("", "Edited once", ["This edit voided the approval of", "Resubmit for review"]),
        ("/ko", "Edited twice", ["승인이 무효가 되었습니다", "다시 검토 요청"]),
    ]:
        data = form_data(client.get(f"{prefix}{url}").text)
        data["title_en"] = title
        response = client.post(f"{prefix}{url}", data, follow=True)
        shown = {m.level_tag: str(m) for m in get_messages(response.wsgi_request)}
        warning = shown.get("warning", "")
        assert all(text in warning for text in expected), shown
        assert f"{version} · KR" in warning
        assert f'href="{prefix}{REVIEWS}?state__exact=voided"' in warning
        assert 'class="warning"' in response.text
        LocalReview.objects.filter(pk=kr_review.pk).update(
            state=ReviewState.APPROVED,
            approved_hash=TaskVersion.objects.get(pk=version.pk).content_hash,
        )
    # A save that voids nothing says nothing of reviews.
    data = form_data(client.get(url).text)
    response = client.post(url, data, follow=True)
    assert not [m for m in get_messages(response.wsgi_request) if m.level_tag == "warning"]


def test_the_resubmit_action_in_the_review_desk(client, kr_review, people):
    approved(kr_review, people)
    edited(kr_review.version, people)
    client.force_login(people["author"])
    listing = client.get(f"{REVIEWS}?state__exact=voided")
    assert "resubmit" in dict(listing.context["action_form"].fields["action"].choices)
    response = client.post(
        f"/ko{REVIEWS}", {"action": "resubmit", "_selected_action": [kr_review.pk]}, follow=True
    )
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        f"검토를 다시 요청했습니다: {kr_review.version} · KR. 현재 상태는 “검토 중”입니다."
    ]


def test_the_public_page_shows_only_the_approval_in_force(client, kr_review, people):
    """Issue 34, item 2: "the public task page shows only the approval in force"."""
    slug = kr_review.version.definition.slug

    def reviews_section(prefix=""):
        page = client.get(f"{prefix}/tasks/{slug}/").text
        return page.split('id="reviews"', 1)[1].split("<h2", 1)[0]

    assert "No local review has approved this version as it stands yet." in reviews_section()
    review_transition(review_id=kr_review.pk, action="submit", actor=people["author"])
    assert "In review" not in reviews_section()
    review_transition(review_id=kr_review.pk, action="approve", actor=people["reviewer"])
    assert "KR: Approved" in reviews_section()
    edited(kr_review.version, people)
    shown = reviews_section()
    assert "Voided" not in shown and "KR:" not in shown
    assert "아직 없습니다" in reviews_section("/ko")


def test_a_comment_is_anchored_by_choosing_from_a_list(client, kr_review, people):
    """Issue 34, item 2: "Comments are anchored by choosing a field or section from a
    list, not by typing internal names"."""
    url = f"{REVIEWS}{kr_review.pk}/change/"
    client.force_login(people["reviewer"])
    page = client.get(url)
    field = page.context["inline_admin_formsets"][2].formset.forms[0].fields["anchor"]
    groups = dict(field.choices)
    parts = dict(groups["Parts of the task version"])
    assert parts["final_state"] == "Final state"
    assert parts["references"] == "Speed and cost references"
    section = ChapterItem.objects.filter(edition__status="draft").order_by("pk").first()
    sections = {value: label for _group, options in field.choices[2:] for value, label in options}
    assert section.section_id in sections and section.section_id in sections[section.section_id]
    assert '<select name="comments-2-0-anchor"' in page.text

    data = form_data(page.text)
    data.update({"comments-2-0-anchor": section.section_id, "comments-2-0-body": "Cite it."})
    assert client.post(url, data).status_code == 302
    assert ReviewComment.objects.get().anchor == section.section_id
    korean = client.get(f"/ko{url}").text
    assert sections[section.section_id] in client.get(url).text
    assert "과제 버전의 항목" in korean


def test_challenges_on_claims_without_an_owner_reach_the_method_lead(
    client, canonical_content, django_capture_on_commit_callbacks
):
    """Issue 34, item 2: "Challenges on claims without an owner reach the method lead's
    queue"; the lead is told by e-mail when one becomes public."""
    from mica.site.work_queues import work_queues
    from submissions.challenges import challenge_transition

    lead = LeadFactory(username="method-lead")
    editor = StaffFactory(username="editor", app_permissions=("submissions",))
    challenge = confirmed_challenge()
    assert not ChapterItem.objects.filter(
        edition=challenge.edition, section_id=challenge.section_id, owner__isnull=False
    ).exists()

    def unowned(person):
        queues = {q.url.rsplit("=", 1)[1]: q.count for q in work_queues(person)}
        return queues.get("unowned")

    assert unowned(lead) == 0 and unowned(editor) is None
    with django_capture_on_commit_callbacks(execute=True):
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="In scope.", actor=editor
        )
    assert unowned(lead) == 1
    (told,) = OutboxMessage.objects.filter(subject__contains="a claim without an owner")
    assert told.to == lead.email and "담당자가 없는 주장" in told.subject
    client.force_login(lead)
    assert str(challenge) in client.get("/admin/submissions/challenge/?mine=unowned").text
    client.force_login(editor)
    listing = client.get("/admin/submissions/challenge/?mine=unowned")
    assert listing.context["cl"].result_count == 1  # an editor's choice ignores it

    ChapterItem.objects.filter(edition=challenge.edition, section_id=challenge.section_id).update(
        owner=editor
    )
    assert unowned(lead) == 0


def test_a_new_challenge_is_announced_to_those_who_can_screen_it(
    canonical_content, django_capture_on_commit_callbacks
):
    """Issue 34, item 2: "notice e-mails go to the people who can act, not to every staff
    account"."""
    lead = LeadFactory(username="method-lead")
    screener = StaffFactory(username="screener", app_permissions=("submissions",))
    bystander = StaffFactory(username="bystander", app_permissions=("catalogue",))
    with django_capture_on_commit_callbacks(execute=True):
        challenge = confirmed_challenge()
    notices = OutboxMessage.objects.filter(subject__contains="New MICA challenge")
    assert sorted(notices.values_list("to", flat=True)) == sorted([lead.email, screener.email])
    assert not OutboxMessage.objects.filter(to=bystander.email).exists()
    notice = notices.first()
    # Issue 43, item 10: the subject names the section by its title, not its id.
    assert f"#{challenge.pk}" in notice.subject and challenge.section_id not in notice.subject
    assert "새 MICA 이의 제기" in notice.subject and "심사해 주세요" in notice.body
    assert f"/admin/submissions/challenge/{challenge.pk}/change/" in notice.body
