"""API tokens no one can read back, and an API that honours the second factor.

A hostile probe found DRF's token admin listing every key in clear to any staff account
allowed to view tokens: a view-only staff member could act through the API as a
superuser or a holdout keeper, without a second factor. Now the database keeps a digest
and the first characters of each key (django-rest-knox), a key is shown once to the
verified superuser who issues it, and a session or a password of an account that needs a
second factor does not write through the API without it.

Real requests through Django's test client, the real admin, the real migration of DRF's
old table, on whichever database the run uses."""

import base64
import re
import types

import pytest
from django.apps import apps
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone
from knox.models import AuthToken

from markets.models import CompetenceRole, IntegrationSituation
from mica.errors import PermissionRefused
from mica.site.enrolment import api_token_issue
from tests.factories import (
    PASSWORD,
    LeadFactory,
    StaffFactory,
    UserFactory,
    api_token,
    grant,
    totp_code,
    totp_device,
)

pytestmark = pytest.mark.django_db

ATTEMPTS = "/api/v1/attempts/"
TOKENS = "/admin/site/apitoken/"
SHOWN_ONCE = re.compile(r'<code id="shown-once" class="shown-once">([^<]+)</code>')


def signed(key):
    return {"HTTP_AUTHORIZATION": f"Token {key}"}


def authenticates(client, key):
    """Whether the API takes `key`: an empty batch is refused for what it holds (400),
    never for who sent it (401)."""
    response = client.post(ATTEMPTS, "[]", content_type="application/json", **signed(key))
    return response.status_code != 401


def admin_client(client_class, user):
    admin = client_class()
    admin.force_login(user)  # a finished sign-in: the password and a TOTP code
    return admin


def issue_in_the_admin(admin, user, **extra):
    response = admin.post(f"{TOKENS}add/", {"user": user.pk, **extra})
    assert response.status_code == 200, response.status_code
    return SHOWN_ONCE.search(response.text).group(1)


def database_holds(text):
    """Every table, every row, every column, as the database gives them."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            found += [table for row in cursor.fetchall() if text in repr(row)]
    return found


def view_only_staff():
    """Staff allowed to view every record of every app, and nothing else."""
    person = StaffFactory(username="viewer")
    person.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    return User.objects.get(pk=person.pk)


def admin_pages(client):
    """Every admin list the account may open, and the page of each record listed first."""
    index = client.get("/admin/")
    assert index.status_code == 200
    lists = sorted(set(re.findall(r'href="(/admin/[a-z_]+/[a-z_]+/)"', index.text)))
    assert lists
    pages = {"/admin/": index.text}
    for url in lists:
        listing = client.get(url)
        pages[url] = listing.text
        first = re.search(rf'href="({re.escape(url)}[^"/]+/change/)', listing.text)
        if first:
            pages[first.group(1)] = client.get(first.group(1)).text
    return pages


# --- Item 1: tokens no one can read back -------------------------------------------------


def test_a_view_only_staff_account_finds_no_usable_token(client, canonical_content):
    """The acceptance: a view-only staff account finds no usable token anywhere in the
    admin or the database. A key a verified superuser issued works on the API, and is
    in no admin page the viewer opens and in no row of any table."""
    lead = LeadFactory()
    keeper = StaffFactory(username="keeper")
    key = issue_in_the_admin(admin_client(type(client), lead), keeper)
    assert authenticates(client, key)
    assert not authenticates(client, key[:-1] + ("0" if key[-1] != "0" else "1"))

    viewer = admin_client(type(client), view_only_staff())
    pages = admin_pages(viewer)
    assert "/admin/auth/user/" in pages  # the viewer does see the admin's lists
    assert not [url for url, text in pages.items() if key in text]
    assert viewer.get(TOKENS).status_code == 403
    assert not database_holds(key)
    # What the database keeps is the digest and the first characters, nothing more.
    stored = AuthToken.objects.get(user=keeper)
    assert key.startswith(stored.token_key) and len(stored.token_key) < len(key) / 3


def test_a_key_is_shown_once_then_only_its_first_characters(client, canonical_content):
    """Show a key once at creation, list only a prefix afterwards."""
    admin = admin_client(type(client), LeadFactory())
    operator = UserFactory(username="harbor-ops")
    key = issue_in_the_admin(admin, operator)
    assert len(key) == 64
    token = AuthToken.objects.get(user=operator)
    listing = admin.get(TOKENS)
    assert f"{key[:8]}…" in listing.text and key[:9] not in listing.text
    page = admin.get(f"{TOKENS}{token.pk}/change/")
    assert page.status_code == 200 and key[:9] not in page.text
    # The digest names the record (knox's primary key): no key can be worked back from it.
    assert key not in listing.text and key not in page.text
    # Deleting it revokes it.
    assert authenticates(client, key)
    admin.post(f"{TOKENS}{token.pk}/delete/", {"post": "yes"})
    assert not authenticates(client, key)


def test_token_management_is_for_superusers_who_passed_the_second_factor(client):
    """Limit token management to superusers who passed the second factor: staff holding
    every permission on tokens see nothing, a superuser signed in with the password alone
    is sent to the second step, and the service refuses an unverified actor."""
    clerk = StaffFactory(username="clerk")
    clerk.user_permissions.add(*Permission.objects.filter(content_type__app_label="site"))
    holder = admin_client(type(client), User.objects.get(pk=clerk.pk))
    assert holder.get(TOKENS).status_code == 403
    assert holder.post(f"{TOKENS}add/", {"user": clerk.pk}).status_code == 403
    assert "/admin/site/apitoken/" not in holder.get("/admin/").text
    assert not AuthToken.objects.exists()

    lead = LeadFactory()
    totp_device(lead)
    client.post("/admin/login/", {"username": "lead", "password": PASSWORD})
    step = client.post(f"{TOKENS}add/", {"user": clerk.pk})
    assert step.status_code == 302 and step["Location"].startswith("/admin/second-factor/")
    assert not AuthToken.objects.exists()
    lead.is_verified = lambda: False
    with pytest.raises(PermissionRefused):
        api_token_issue(user=clerk, actor=lead)


def test_an_expired_token_is_refused(client, canonical_content):
    admin = admin_client(type(client), LeadFactory())
    key = issue_in_the_admin(admin, UserFactory(), expiry_0="2026-01-01", expiry_1="00:00:00")
    assert AuthToken.objects.get().expiry < timezone.now()
    assert not authenticates(client, key)


def test_odd_token_headers_never_answer_500(client, canonical_content):
    """No input a user can send yields a 500: keys with NUL, bytes that are not ASCII,
    huge ones, several words."""
    for header in (
        "Token abc\x00def",
        "Token " + "é" * 40,
        "Token " + "a" * 5000,
        "Token " + "ab" * 32 + " extra",
        "Token",
    ):
        response = client.post(
            ATTEMPTS, "[]", content_type="application/json", HTTP_AUTHORIZATION=header
        )
        assert response.status_code in {400, 401}, (header, response.status_code)


def old_token_table(user, key):
    """DRF's table as rest_framework.authtoken left it, with one key in it, and its
    permissions granted to `user`."""
    stamp = "timestamp with time zone" if connection.vendor == "postgresql" else "datetime"
    with connection.cursor() as cursor:
        cursor.execute(
            f'CREATE TABLE authtoken_token ("key" varchar(40) PRIMARY KEY, '
            f"created {stamp} NOT NULL, user_id integer NOT NULL)"
        )
        cursor.execute(
            "INSERT INTO authtoken_token VALUES (%s, %s, %s)", [key, timezone.now(), user.pk]
        )
    kind = ContentType.objects.create(app_label="authtoken", model="token")
    user.user_permissions.add(
        Permission.objects.create(content_type=kind, codename="view_token", name="view")
    )


@pytest.mark.vendor
def test_old_keys_keep_working_as_digests_after_the_migration(client, canonical_content):
    """Existing tokens migrate without being shown again: the digest of each old key is
    stored, the old key keeps working, and DRF's table and permissions are gone."""
    from importlib import import_module

    migration = import_module("mica.site.migrations.0005_api_tokens_and_enrolment_codes")
    operator = UserFactory(username="harbor-ops")
    old_key = "0123456789abcdef0123456789abcdef01234567"
    old_token_table(operator, old_key)
    assert database_holds(old_key)
    editor = types.SimpleNamespace(connection=connection, quote_name=connection.ops.quote_name)
    migration.tokens_to_digests(apps, editor)
    assert "authtoken_token" not in connection.introspection.table_names()
    assert not ContentType.objects.filter(app_label="authtoken").exists()
    assert not database_holds(old_key)
    assert authenticates(client, old_key)
    # Run again on a database without the old table, it changes nothing.
    migration.tokens_to_digests(apps, editor)
    assert AuthToken.objects.count() == 1


# --- Item 3: the API honours the second factor ---------------------------------------------


@pytest.fixture
def situation(canonical_content):
    return IntegrationSituation.objects.filter(market_edition__market__code="KR").first()


def patch(client, situation, title, **extra):
    return client.patch(
        f"/api/v1/markets/kr/situations/{situation.situation_id}/",
        {"title_en": title},
        content_type="application/json",
        **extra,
    )


def test_a_password_only_superuser_session_gets_403_on_an_api_write(client, situation):
    """The acceptance: a password-only superuser session gets 403 on an API write; the
    same session writes once it has confirmed a code."""
    lead = LeadFactory()
    grant(lead, "KR", CompetenceRole.AUTHOR, LeadFactory(username="other-lead"))
    device = totp_device(lead)
    assert client.post("/admin/login/", {"username": "lead", "password": PASSWORD}).status_code
    refused = patch(client, situation, "Written with a password alone")
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("This account needs a second factor")
    korean = patch(client, situation, "Written with a password alone", HTTP_ACCEPT_LANGUAGE="ko")
    assert korean.status_code == 403 and not korean.json()["detail"].startswith("This")
    situation.refresh_from_db()
    assert situation.title_en != "Written with a password alone"
    # Reads are open to anyone, and stay so.
    assert client.get(f"/api/v1/markets/kr/situations/{situation.situation_id}/").status_code == 200
    client.post("/admin/second-factor/", {"code": totp_code(device), "next": "/admin/"})
    assert patch(client, situation, "Written once verified").status_code == 200
    situation.refresh_from_db()
    assert situation.title_en == "Written once verified"


def test_staff_without_a_second_factor_write_with_their_session(client, situation):
    """Accounts that need no second factor write through the API with their session."""
    editor = StaffFactory(username="kr-editor")
    editor.user_permissions.add(*Permission.objects.filter(content_type__app_label="markets"))
    grant(editor, "KR", CompetenceRole.AUTHOR, LeadFactory())
    client.post("/admin/login/", {"username": "kr-editor", "password": PASSWORD})
    assert patch(client, situation, "Written by a local editor").status_code == 200


def basic(username, password=PASSWORD):
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {token}"}


def test_http_basic_auth_is_refused_for_accounts_that_need_a_second_factor(client, situation):
    """HTTP Basic auth is refused for such accounts (they use tokens issued in a verified
    session); other accounts keep it; a token of the same account writes."""
    lead = LeadFactory()
    grant(lead, "KR", CompetenceRole.AUTHOR, LeadFactory(username="other-lead"))
    refused = patch(client, situation, "Written with Basic auth", **basic("lead"))
    assert refused.status_code == 403 and "Token <key>" in refused.json()["detail"]
    assert client.get("/api/v1/markets/", **basic("lead")).status_code == 403
    situation.refresh_from_db()
    assert situation.title_en != "Written with Basic auth"
    StaffFactory(username="clerk")
    assert client.get("/api/v1/markets/", **basic("clerk")).status_code == 200
    key = api_token(lead)
    assert patch(client, situation, "Written with a token", **signed(key)).status_code == 200


def test_the_schema_describes_every_way_in_without_a_warning(tmp_path):
    """The API docs stay true: the token, the session and HTTP Basic auth are each
    described (the session as the cookie it is), and drf-spectacular warns of nothing."""
    import yaml
    from django.core.management import call_command

    schema = tmp_path / "schema.yaml"
    call_command("spectacular", "--fail-on-warn", "--file", str(schema))
    schemes = yaml.safe_load(schema.read_text())["components"]["securitySchemes"]
    assert {"tokenAuth", "cookieAuth", "basicAuth"} <= set(schemes)
    assert (
        schemes["tokenAuth"]["in"] == "header"
        and "API tokens" in schemes["tokenAuth"]["description"]
    )
