"""Staff roles out of the box (issue 43, item 1).

Finding: "The manual never says how to make an author's or a reviewer's account; doing it
as a Django administrator would ('Task catalogue' → choose all) brings the holdout
permission with them, so the author cannot sign in until someone issues an enrolment code
the authors' guide never mentions." Now the migration site.0008_staff_roles ships a group
for each role with exactly the permissions of mica.site.roles: an administrator makes an
author and a reviewer from them, as docs/reference/staff-accounts.md says, and each signs
in with the password alone; a holdout keeper is asked for a second factor.

Through the admin's real POSTs and sign-in at /admin/login/.
"""

import datetime
import re

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.db.migrations.recorder import MigrationRecorder
from django.urls import reverse

from markets.models import Market, MarketCompetence
from mica.site.roles import HOLDOUT_CODENAME, STAFF_ROLES, role_permissions, staff_roles_set
from mica.site.staff import second_factor_required
from tests.factories import PASSWORD, LeadFactory, totp_code, totp_device

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a long passphrase of the author's own 7"


@pytest.fixture
def shipped_roles(canonical_content):
    """The groups as the migration left them. A transactional test's flush empties every
    table, which a migration does not refill; the permissions come back with the flush's
    post_migrate, the groups from the same table here."""
    names = [role.name for role in STAFF_ROLES]
    if Group.objects.filter(name__in=names).count() != len(names):
        staff_roles_set(Group, Permission)


def dotted(permissions):
    return {f"{p.content_type.app_label}.{p.codename}" for p in permissions}


def test_the_migration_ships_each_role_as_a_group_with_exactly_its_permissions(shipped_roles):
    """Before, no group existed and an administrator chose permissions by hand."""
    assert MigrationRecorder.Migration.objects.filter(app="site", name="0008_staff_roles")
    for role in STAFF_ROLES:
        group = Group.objects.get(name=role.name)
        granted = dotted(group.permissions.select_related("content_type"))
        assert granted == dotted(role_permissions(role, Permission).select_related("content_type"))
        assert set(role.permissions) <= granted, role.name  # no codename of the table is stale
        if not role.second_factor:
            assert HOLDOUT_CODENAME not in granted, role.name


@pytest.mark.parametrize("role", STAFF_ROLES, ids=lambda role: role.name)
def test_a_member_needs_a_second_factor_exactly_as_the_table_says(shipped_roles, role):
    """Writing tasks never brings the holdout: no author or reviewer is asked for a code."""
    person = User.objects.create_user(
        role.name.lower().replace(" ", "-"), is_staff=True, is_superuser=role.superuser
    )
    person.groups.add(Group.objects.get(name=role.name))
    assert second_factor_required(User.objects.get(pk=person.pk)) is role.second_factor


def administrator_signs_in(client):
    """The administrator: a superuser with a device, through the password and a code."""
    lead = LeadFactory(username="administrator")
    device = totp_device(lead)
    client.post("/admin/login/", {"username": "administrator", "password": PASSWORD})
    assert client.post("/admin/second-factor/", {"code": totp_code(device)}).status_code == 302
    return lead


def make_account(admin, username, role_name):
    """The administrator's two forms, as the staff-accounts reference tells: add the
    account with a password, then tick "Staff status" and choose the role's group."""
    added = admin.post(
        "/admin/auth/user/add/",
        {
            "username": username,
            "usable_password": "true",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    assert added.status_code == 302, added.text[:2000]
    person = User.objects.get(username=username)
    joined = person.date_joined
    changed = admin.post(
        f"/admin/auth/user/{person.pk}/change/",
        {
            "username": username,
            "email": f"{username}@example.org",
            "is_active": "on",
            "is_staff": "on",
            "groups": [Group.objects.get(name=role_name).pk],
            "date_joined_0": joined.strftime("%Y-%m-%d"),
            "date_joined_1": joined.strftime("%H:%M:%S"),
        },
    )
    assert changed.status_code == 302, changed.text[:2000]
    return person


def grant_competence(admin, administrator, person, role):
    """A market competence for KR, as the authors' and reviewers' guides say."""
    response = admin.post(
        "/admin/markets/marketcompetence/add/",
        {
            "user": person.pk,
            "market": Market.objects.get(code="KR").pk,
            "role": role,
            "verified_by": administrator.pk,
            "valid_until": (datetime.date.today() + datetime.timedelta(days=365)).isoformat(),
        },
    )
    assert response.status_code == 302, response.text[:2000]
    assert MarketCompetence.objects.filter(user=person, role=role).exists()


def signs_in(client, username):
    response = client.post("/admin/login/", {"username": username, "password": NEW_PASSWORD})
    assert response.status_code == 302
    return response["Location"]


def test_an_administrator_makes_an_author_who_signs_in_and_writes_a_task_version(
    client, shipped_roles
):
    """The finding: the author made from the shipped role signs in with the password
    alone (no enrolment code) and opens the task version add page."""
    administrator = administrator_signs_in(client)
    author = make_account(client, "new-author", "Task author")
    grant_competence(client, administrator, author, "author")

    own = type(client)()
    assert signs_in(own, "new-author") == "/admin/"
    assert own.get("/admin/").status_code == 200
    assert own.get("/admin/catalogue/taskversion/add/").status_code == 200
    assert own.get("/admin/catalogue/localreview/add/").status_code == 200
    index = own.get("/admin/").text
    assert "My drafts and reviews sent back" in index
    assert "/admin/catalogue/holdoutsalt/" not in index


def test_an_administrator_makes_a_reviewer_who_signs_in_and_finds_their_queue(
    client, shipped_roles
):
    administrator = administrator_signs_in(client)
    reviewer = make_account(client, "new-reviewer", "Local reviewer")
    grant_competence(client, administrator, reviewer, "reviewer")

    own = type(client)()
    assert signs_in(own, "new-reviewer") == "/admin/"
    assert "Awaiting my review" in own.get("/admin/").text
    assert own.get("/admin/catalogue/localreview/?mine=review").status_code == 200
    # A reviewer decides; writing a version is the author's.
    assert own.get("/admin/catalogue/taskversion/add/").status_code == 403

    # With a Korean competence, the claims list offers the approval of a Korean text.
    added = client.post(
        "/admin/methodology/languagecompetence/add/",
        {
            "user": reviewer.pk,
            "language": "ko",
            "verified_by": administrator.pk,
            "valid_until": (datetime.date.today() + datetime.timedelta(days=365)).isoformat(),
        },
    )
    assert added.status_code == 302, added.text[:2000]
    assert 'value="approve_korean"' in own.get("/admin/methodology/chapteritem/").text


def test_a_holdout_keeper_is_asked_for_a_second_factor(client, shipped_roles):
    administrator_signs_in(client)
    make_account(client, "new-keeper", "Holdout keeper")

    own = type(client)()
    signs_in(own, "new-keeper")
    opened = own.get("/admin/")
    assert opened.status_code == 302
    assert opened["Location"].startswith(reverse("second-factor-enrol"))


def test_the_roles_read_in_korean_in_the_group_list_and_on_the_user_form(client, shipped_roles):
    administrator_signs_in(client)
    author = make_account(client, "new-author", "Task author")

    groups = client.get("/ko/admin/auth/group/").text
    for label in (
        "과제 저자",
        "현지 검토자",
        "방법론 책임자",
        "홀드아웃 담당자",
        "운영 주체",
        "관리자",
    ):
        assert label in groups, label

    form = client.get(f"/ko/admin/auth/user/{author.pk}/change/").text
    chosen = re.search(r'<select name="groups".*?</select>', form, re.S).group(0)
    assert "과제 저자" in chosen and "Task author" not in chosen
    assert '과제 저자 (<span translate="no">Task author</span>)' in form  # the help's list
    assert "2단계 인증이 필요합니다" in form
    # The user list's filter by group names the roles too.
    assert "과제 저자" in client.get("/ko/admin/auth/user/").text
