"""The review desk in the admin: opening, moving and finding reviews, and the matrix."""

import pytest

from catalogue.models import LocalReview, ReviewState
from markets.models import Market
from tests.census import form_data

pytestmark = pytest.mark.django_db


def test_an_author_opens_a_review_in_the_admin(client, people, task):
    client.force_login(people["author"])
    kr = Market.objects.get(code="KR")
    response = client.post(
        "/admin/catalogue/localreview/add/", {"version": task.current_version.pk, "market": kr.pk}
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    review = LocalReview.objects.get()
    assert review.author == people["author"] and review.state == ReviewState.DRAFT
    again = client.post(
        "/ko/admin/catalogue/localreview/add/",
        {"version": task.current_version.pk, "market": kr.pk},
    )
    assert again.status_code == 200 and "이미" in again.text
    assert LocalReview.objects.count() == 1


def test_a_non_author_cannot_open_one(client, people, task):
    client.force_login(people["jp_reviewer"])
    kr = Market.objects.get(code="KR")
    response = client.post(
        "/admin/catalogue/localreview/add/", {"version": task.current_version.pk, "market": kr.pk}
    )
    assert response.status_code == 200 and "competence" in response.text
    assert not LocalReview.objects.exists()


def test_my_drafts_and_awaiting_my_review(client, people, kr_review):
    client.force_login(people["author"])
    drafts = client.get("/admin/catalogue/localreview/?mine=drafts")
    assert str(kr_review.version) in drafts.text
    client.post(
        "/admin/catalogue/localreview/", {"action": "submit", "_selected_action": [kr_review.pk]}
    )
    kr_review.refresh_from_db()
    assert kr_review.state == ReviewState.IN_REVIEW

    client.force_login(people["reviewer"])
    waiting = client.get("/admin/catalogue/localreview/?mine=review")
    assert str(kr_review.version) in waiting.text
    client.force_login(people["jp_reviewer"])
    assert (
        str(kr_review.version) not in client.get("/admin/catalogue/localreview/?mine=review").text
    )

    client.force_login(people["author"])
    refused = client.post(
        "/admin/catalogue/localreview/",
        {"action": "approve", "_selected_action": [kr_review.pk]},
        follow=True,
    )
    assert "Only a reviewer" in refused.text
    client.force_login(people["reviewer"])
    client.post(
        "/admin/catalogue/localreview/", {"action": "approve", "_selected_action": [kr_review.pk]}
    )
    kr_review.refresh_from_db()
    assert kr_review.state == ReviewState.APPROVED


def test_translation_status_matrix(client, people, kr_review):
    client.force_login(people["lead"])
    page = client.get("/admin/catalogue/taskversion/translation-status/")
    assert page.status_code == 200
    assert "gc-resident-record-extract 1.0.0" in page.text
    assert page.text.count("complete") >= 200


def test_translation_status_needs_the_permission_to_view_task_versions(client, canonical_content):
    """Issue 33, item 9: "the translation-status admin page needs a permission": staff
    without it are refused, as on the task versions' own list."""
    from django.contrib.auth.models import Permission

    from tests.factories import StaffFactory

    staff = StaffFactory(username="no-catalogue-rights")
    client.force_login(staff)
    url = "/admin/catalogue/taskversion/translation-status/"
    assert client.get("/admin/catalogue/taskversion/").status_code == 403
    assert client.get(url).status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_taskversion"))
    assert client.get(url).status_code == 200


def test_editing_a_version_in_the_admin_voids_its_approval(client, people, kr_review):
    from catalogue.workflows import review_transition

    review_transition(review_id=kr_review.pk, action="submit", actor=people["author"])
    review_transition(review_id=kr_review.pk, action="approve", actor=people["reviewer"])
    version = kr_review.version
    client.force_login(people["lead"])
    page = client.get(f"/admin/catalogue/taskversion/{version.pk}/change/")
    assert page.status_code == 200
    # What a browser posts: the structured fields come from their widgets.
    data = form_data(page.text)
    data["title_en"] = version.title_en + " (edited)"
    response = client.post(f"/admin/catalogue/taskversion/{version.pk}/change/", data)
    assert response.status_code == 302, (
        response.context["adminform"].form.errors,
        [f.errors for fs in response.context["inline_admin_formsets"] for f in fs.formset.forms],
        [fs.formset.non_form_errors() for fs in response.context["inline_admin_formsets"]],
    )
    kr_review.refresh_from_db()
    assert kr_review.state == ReviewState.VOIDED
    assert people["lead"] in version.editors.all()
