"""The write-path census: every write path stores what it acknowledges.

Issue 14: every public form POST, every API write, every admin add, change, delete
and action, every admin URL that takes a POST and every management command of the
project is listed in CENSUS, either with a case that performs it as a user would or
as read-only (or not offered) with the reason. `test_the_census_lists_every_write_path`
discovers them all (tests/census.py says how) and fails for one that is not listed,
and for one listed that no longer exists.

Each case runs as production does. No test transaction wraps it: the views and
services run in autocommit or in their own atomic blocks, and after-commit callbacks
(the revision bump, outbox mail, jobs, run in this process) execute when their
transaction commits, not at the end of a test. After every success answer the case
reads the row through a second connection, which sees only what is committed, and
the audit record where the model has one: ChallengeEvent, ReviewEvent, JobRun, the
admin's LogEntry, and the django-simple-history row of a model that has a history.

The database is loaded once for the module (`world`, which this module's `db`
fixture stands for) and flushed at its end, as a transactional test flushes it:
reloading the content for each of some two hundred cases would take many minutes. A
case makes the records it needs under fresh names and undoes what would change the
canonical state for the next (`ctx.later`), so the cases do not depend on one
another's order. A read-only entry is checked too: not offered to a superuser, or
every table's committed row count unchanged by it.

Discovery sees routes, not behaviour: a GET that writes (the challenger's
confirmation link) is not discovered; the challenge cases follow that link and check
what it stores.
"""

import datetime
import io
import json
import re
import uuid

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from tests import census
from tests.factories import (
    SnapshotFactory,
    SystemFactory,
    attempt_payload,
    system_submission_payload,
)
from tests.support import database_flush

pytestmark = pytest.mark.vendor

RULE = "Nothing acknowledged is lost: a success answer means the row is committed."


# --- The module's database, as production runs it ------------------------------------


class World:
    """The people and helpers the cases share; the database stays between cases."""

    def __init__(self):
        self.observer = census.Observer()
        self.lead = User.objects.create_superuser(
            "census-lead", "census-lead@example.org", "pw-for-tests-only"
        )
        self.second_lead = User.objects.create_superuser(
            "census-lead-2", "census-lead-2@example.org", "pw-for-tests-only"
        )

    def client(self, user=None):
        """A browser: CSRF checked as in production, signed in as `user` if given."""
        browser = Client(enforce_csrf_checks=True)
        if user is not None:
            browser.force_login(user)
        return browser

    def user(self, username, **fields):
        user, _created = User.objects.get_or_create(username=username, defaults=fields)
        return user

    def edition(self):
        """The current edition; the canonical one is a draft, so its records may change."""
        from mica.methodology.models import EditionStatus
        from mica.methodology.selectors import edition_current

        edition = edition_current()
        assert edition.status == EditionStatus.DRAFT, "the cases change the draft edition"
        return edition

    def close(self):
        self.observer.close()


# A market that exists nowhere, for cases that add one: ISO 3166's user-assigned region
# ZZ and ISO 4217's "XXX", the code for no currency.
CENSUSLAND = {
    "native_name": "Censusland",
    "native_lang": "en",
    "locale": "en-ZZ",
    "currency_code": "XXX",
    "currency_symbol": "¤",
    "timezone": "UTC",
}


def _content_loaded():
    from catalogue.models import TaskDefinition

    return TaskDefinition.objects.exists()


def _a_test_database():
    name = str(connection.settings_dict["NAME"])
    if connection.vendor == "sqlite":
        return connection.is_in_memory_db() or "test" in name
    return name.startswith("test_")


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The database as production has it: no test transaction around anything.

    Loaded once (a transactional test before this module may have flushed it), then
    flushed at the end and loaded afresh, committed: later tests find the canonical
    content and its revision without loading them inside their own transaction (which
    would mark it as holding uncommitted content, and bypass the page cache).
    """
    with django_db_blocker.unblock():
        assert _a_test_database(), f"not a test database: {connection.settings_dict['NAME']}"
        assert connection.get_autocommit() and not connection.in_atomic_block
        if not _content_loaded():
            call_command("load_canonical_content", stdout=io.StringIO())
        shared = World()
        try:
            yield shared
        finally:
            shared.close()
            database_flush()
            call_command("load_canonical_content", stdout=io.StringIO())


@pytest.fixture
def db(world):
    """This module's database: the production-mode `world`, never a test transaction.

    It overrides pytest-django's `db` (which wraps each test in a rolled-back
    transaction and defers after-commit callbacks) and keeps its name, because
    pytest-django creates the test database only when a collected test asks for `db`,
    `transactional_db` or the `django_db` mark.
    """


class Context:
    """What one case gets: the shared world and this test's settings, files and mail."""

    def __init__(self, world, settings, tmp_path, mailoutbox):
        self.world = world
        self.settings = settings
        self.tmp_path = tmp_path
        self.mail = mailoutbox
        self.observer = world.observer
        self.lead = world.lead
        self.cleanups = []

    def later(self, cleanup):
        """Undo something once the case is done, so the next case finds the canonical state."""
        self.cleanups.append(cleanup)

    def __getattr__(self, name):
        return getattr(self.world, name)


# --- Assertions every case uses -----------------------------------------------------------


def committed(ctx, queryset, message=""):
    """The committed rows of `queryset`, through a fresh connection; at least one."""
    rows = ctx.observer.rows(queryset)
    assert rows, f"{RULE} Not committed: {queryset.model._meta.label} {message}".strip()
    return rows


def gone(ctx, queryset, message=""):
    assert not ctx.observer.rows(queryset), (
        f"A success answer to a delete means the row is gone: "
        f"{queryset.model._meta.label} {message} is still committed"
    )


def logged(ctx, obj_or_model, pk, flag):
    """The admin's own audit record of an add, change or delete."""
    content_type = ContentType.objects.get_for_model(obj_or_model, for_concrete_model=False)
    committed(
        ctx,
        LogEntry.objects.filter(content_type=content_type, object_id=str(pk), action_flag=flag),
        f"(admin log of {content_type.model} #{pk}, flag {flag})",
    )


def history_kept(ctx, model, pk, kind):
    """Where the model keeps a revision history, the write left its history row."""
    if not hasattr(model, "history"):
        return
    history = model.history.model.objects.filter(**{model._meta.pk.attname: pk}, history_type=kind)
    committed(ctx, history, f"(history {kind!r} of {model._meta.label} #{pk})")


def form_of(response, form_id=None):
    assert response.status_code == 200, response.status_code
    return census.form_data(response.content.decode(), form_id)


def redirected(response, message=""):
    assert response.status_code == 302, (response.status_code, _errors(response), message)
    return response["Location"]


def _errors(response):
    """The form errors of an answer that should have been a success, for the failure text."""
    context = getattr(response, "context", None)
    if not context:
        return response.content[:2000]
    found = []
    for key in ("adminform", "form"):
        try:
            form = context[key]
        except KeyError:
            continue
        form = getattr(form, "form", form)
        found.append(form.errors)
    try:
        for formset in context["inline_admin_formsets"]:
            found.append([f.errors for f in formset.formset.forms])
            found.append(formset.formset.non_form_errors())
    except KeyError:
        pass
    try:
        found.append([str(m) for m in context["messages"]])
    except KeyError:
        pass
    return found


def post_json(client, path, body, method="post", **extra):
    call = getattr(client, method)
    return call(path, json.dumps(body), content_type="application/json", **extra)


# --- Records the cases start from -------------------------------------------------------

CHALLENGE = {
    "section_id": "world-first-claim",
    "challenge_type": "method",
    "what_is_wrong": "The scope claim overlooks an earlier benchmark.",
    "proposed_replacement": "Narrow the claim to outcome-verified execution.",
    "citations": [{"source": "https://example.org/paper", "accessed": "2026-11-20"}],
    "language": "en",
}

SYSTEM_SUBMISSION = system_submission_payload()


def current_edition_slug():
    from mica.methodology.selectors import edition_current

    return edition_current().slug


def a_challenge(confirmed=True, **changes):
    from submissions.challenges import challenge_confirm, challenge_file, confirmation_token

    key = uuid.uuid4().hex
    payload = {
        **CHALLENGE,
        "edition": current_edition_slug(),
        "contact_email": f"{key[:8]}@example.org",
        "idempotency_key": key,
        **changes,
    }
    challenge, _created = challenge_file(payload=payload)
    if confirmed:
        challenge_confirm(token=confirmation_token(challenge))
    return challenge


def a_decided_challenge(ctx):
    """A challenge screened, triaged and rejected by the first lead."""
    from submissions.challenges import challenge_transition

    challenge = a_challenge()
    for action in ("screen", "triage", "reject"):
        challenge_transition(
            challenge_id=challenge.pk, action=action, reason="Decided.", actor=ctx.lead
        )
    return challenge


def an_appeal(ctx):
    from governance.services import appeal_file

    return appeal_file(challenge=a_decided_challenge(ctx), grounds="The citation was misread.")


def a_system_submission():
    from submissions.system_submissions import system_submission_file

    return system_submission_file(
        payload={**SYSTEM_SUBMISSION, "name": f"Census {uuid.uuid4().hex[:8]}"}
    )


def the_operator(ctx):
    """The operator of an official snapshot (acme-agent 2.1), as attempt payloads name it."""
    user = ctx.user("census-operator")
    SnapshotFactory(system=SystemFactory(operator_account=user))
    return user


def an_attempt(ctx):
    from submissions.ingest import attempts_ingest_batch

    operator = the_operator(ctx)
    [(attempt, _created)] = attempts_ingest_batch(
        payloads=[attempt_payload(attempt_id=f"census-{uuid.uuid4().hex[:12]}")], actor=operator
    )
    return attempt


def token_header(user):
    from knox.models import AuthToken

    _token, key = AuthToken.objects.create(user=user)
    return {"HTTP_AUTHORIZATION": f"Token {key}"}


def competent(ctx, username, code, role):
    """A staff user with a current competence of `role` for the market `code`."""
    from django.contrib.auth.models import Permission

    from markets.models import Market, MarketCompetence

    user = ctx.user(username, is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=["catalogue", "markets"])
    )
    MarketCompetence.objects.get_or_create(
        user=user,
        market=Market.objects.get(code=code),
        role=role,
        defaults={
            "verified_by": ctx.lead,
            "valid_until": datetime.date.today() + datetime.timedelta(days=90),
        },
    )
    return User.objects.get(pk=user.pk)  # no cached permissions


def confirmation_link(ctx, email):
    """The path of the confirmation link the challenger was mailed."""
    from submissions.models import OutboxMessage

    bodies = [m.body for m in ctx.mail if email in m.to]
    bodies += OutboxMessage.objects.filter(to=email).values_list("body", flat=True)
    links = [
        link
        for body in bodies
        for link in re.findall(r"https?://\S+/submit/challenge/confirm/\S+/", body)
    ]
    assert links, f"no confirmation link was mailed to {email}"
    return "/" + links[-1].split("://", 1)[1].split("/", 1)[1]


# --- Public forms ---------------------------------------------------------------------------


def case_system_submission_form(ctx):
    """Operators submit a snapshot at /submit/system/.

    Nothing acknowledged is lost: the page says "Submission received" only when the
    submission is committed (on SQLite it once said so and stored nothing).
    """
    from submissions.models import SystemSubmission

    browser = ctx.client()
    data = form_of(browser.get("/submit/system/"))
    name = f"Census form {uuid.uuid4().hex[:8]}"
    data.update(
        {
            **SYSTEM_SUBMISSION,
            "name": name,
            "routable_models": "openai/gpt-x\nlocal/router",
            "tools": "browser",
        }
    )
    response = browser.post("/submit/system/", data)
    assert response.status_code == 200 and "Submission received" in response.text, _errors(response)
    [pk] = committed(ctx, SystemSubmission.objects.filter(name=name), name)
    history_kept(ctx, SystemSubmission, pk, "+")


def case_challenge_form(ctx):
    """Anyone files a challenge at /submit/challenge/ and confirms it by the mailed link.

    Nothing acknowledged is lost: the redirect to "Challenge received" means the
    challenge and its `file` event are committed; "Address confirmed" means the
    confirmation is committed.
    """
    from submissions.models import Challenge, ChallengeEvent

    browser = ctx.client()
    data = form_of(browser.get("/submit/challenge/?section=world-first-claim"))
    email = f"form-{uuid.uuid4().hex[:8]}@example.org"
    data.update(
        {
            "challenge_type": "method",
            "what_is_wrong": CHALLENGE["what_is_wrong"],
            "proposed_replacement": CHALLENGE["proposed_replacement"],
            "citations": "https://example.org/paper 2026-11-20",
            "contact_email": email,
        }
    )
    response = browser.post("/submit/challenge/", data)
    # The receipt carries the signed reference number it shows.
    assert redirected(response).startswith(reverse("submissions:challenge-filed") + "?ref=")
    assert "Challenge received" in browser.get(response["Location"]).text
    [pk] = committed(ctx, Challenge.objects.filter(contact_email=email), email)
    committed(ctx, ChallengeEvent.objects.filter(challenge_id=pk, action="file"))
    history_kept(ctx, Challenge, pk, "+")

    confirmed = browser.get(confirmation_link(ctx, email))
    assert confirmed.status_code == 200 and "Address confirmed" in confirmed.text
    committed(ctx, Challenge.objects.filter(pk=pk, email_confirmed_at__isnull=False))


def case_appeal_form(ctx):
    """The challenger appeals a decided challenge through the link of the decision e-mail.

    Nothing acknowledged is lost: the redirect back to the challenge means the appeal
    is committed (on SQLite it once redirected and stored nothing).
    """
    from governance.models import Appeal
    from submissions.challenges import appeal_token

    challenge = a_decided_challenge(ctx)
    browser = ctx.client()
    page = browser.get(f"/challenges/{challenge.pk}/appeal/?token={appeal_token(challenge)}")
    data = form_of(page, None)
    grounds = f"The decision overlooked a source ({uuid.uuid4().hex[:8]})."
    data["grounds"] = grounds
    response = browser.post(f"/challenges/{challenge.pk}/appeal/", data)
    assert redirected(response) == f"/challenges/{challenge.pk}/"
    [pk] = committed(ctx, Appeal.objects.filter(challenge_id=challenge.pk, grounds=grounds))
    history_kept(ctx, Appeal, pk, "+")


# --- The API --------------------------------------------------------------------------------


def case_system_submission_api(ctx):
    """POST /api/v1/system-submissions/.

    Nothing acknowledged is lost: `201 {"id": N}` means submission N is committed
    (on SQLite it once answered 201 and stored nothing).
    """
    from submissions.models import SystemSubmission

    name = f"Census API {uuid.uuid4().hex[:8]}"
    response = post_json(
        ctx.client(), "/api/v1/system-submissions/", {**SYSTEM_SUBMISSION, "name": name}
    )
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    committed(ctx, SystemSubmission.objects.filter(pk=pk, name=name), f"#{pk}")
    history_kept(ctx, SystemSubmission, pk, "+")


def case_challenge_api(ctx):
    """POST /api/v1/challenges/, then the mailed confirmation link.

    Nothing acknowledged is lost: `201 {"id": N}` means challenge N and its `file`
    event are committed, and "Address confirmed" means the confirmation is.
    """
    from submissions.models import Challenge, ChallengeEvent

    email = f"api-{uuid.uuid4().hex[:8]}@example.org"
    body = {
        **CHALLENGE,
        "edition": current_edition_slug(),
        "contact_email": email,
        "idempotency_key": uuid.uuid4().hex,
    }
    browser = ctx.client()
    response = post_json(browser, "/api/v1/challenges/", body)
    assert response.status_code == 201, response.content
    pk = response.json()["id"]
    committed(ctx, Challenge.objects.filter(pk=pk, contact_email=email), f"#{pk}")
    committed(ctx, ChallengeEvent.objects.filter(challenge_id=pk, action="file"))
    confirmed = browser.get(confirmation_link(ctx, email))
    assert confirmed.status_code == 200 and "Address confirmed" in confirmed.text
    committed(ctx, Challenge.objects.filter(pk=pk, email_confirmed_at__isnull=False))


def case_attempt_batch_api(ctx):
    """POST /api/v1/attempts/ with an operator's token: a batch, all or nothing.

    Nothing acknowledged is lost: `201 {"recorded": 2}` means both attempts, their
    invocations and evidence are committed, and their gate cell is computed.
    """
    from governance.models import GateCell
    from submissions.models import Attempt, EvidenceRecord, ModelInvocation

    operator = the_operator(ctx)
    ids = [f"census-batch-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    response = post_json(
        ctx.client(),
        "/api/v1/attempts/",
        [attempt_payload(attempt_id=attempt_id) for attempt_id in ids],
        **token_header(operator),
    )
    assert response.status_code == 201, response.content
    assert response.json()["recorded"] == 2
    attempts = committed(ctx, Attempt.objects.filter(attempt_id__in=ids))
    assert len(attempts) == 2, f"{RULE} {len(attempts)} of 2 attempts committed"
    assert ctx.observer.count(ModelInvocation.objects.filter(attempt_id__in=attempts)) == 4
    evidence = 2 * len(attempt_payload()["evidence"])
    assert ctx.observer.count(EvidenceRecord.objects.filter(attempt_id__in=attempts)) == evidence
    attempt = Attempt.objects.get(pk=attempts[0])
    committed(
        ctx,
        GateCell.objects.filter(
            snapshot_id=attempt.snapshot_id,
            market_id=attempt.market_id,
            family_id=attempt.family_id,
        ),
        "(the attempts' gate cell)",
    )


def case_situation_patch_api(ctx):
    """PATCH /api/v1/markets/kr/situations/<id>/ by a local editor competent for KR.

    Nothing acknowledged is lost: `200` with the changed situation means the change
    is committed.
    """
    from markets.models import CompetenceRole, IntegrationSituation

    editor = competent(ctx, "census-kr-editor", "KR", CompetenceRole.AUTHOR)
    situation = IntegrationSituation.objects.filter(
        market_edition__market__code="KR", market_edition__edition=ctx.edition()
    ).first()
    browser = ctx.client(editor)
    browser.get("/submit/challenge/")  # any page with a form sets the CSRF cookie
    title = f"Census title {uuid.uuid4().hex[:8]}"
    response = post_json(
        browser,
        f"/api/v1/markets/kr/situations/{situation.situation_id}/",
        {"title_en": title},
        method="patch",
        HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value,
    )
    assert response.status_code == 200, response.content
    committed(ctx, IntegrationSituation.objects.filter(pk=situation.pk, title_en=title))
    history_kept(ctx, IntegrationSituation, situation.pk, "~")


# --- The admin, generically -----------------------------------------------------------------


def admin_url(model, view, *args):
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


def admin_form(browser, url, model):
    return form_of(browser.get(url), f"{model._meta.model_name}_form")


def without_inline_rows(data):
    """The form's data with every inline formset emptied (for adding a copy of a record)."""
    prefixes = {key.removesuffix("-TOTAL_FORMS") for key in data if key.endswith("-TOTAL_FORMS")}
    kept = {}
    for key, value in data.items():
        prefix, _, rest = key.partition("-")
        if prefix in prefixes and rest.split("-", 1)[0].isdigit():
            continue
        kept[key] = value
    for prefix in prefixes:
        kept[f"{prefix}-TOTAL_FORMS"] = kept[f"{prefix}-INITIAL_FORMS"] = "0"
    return kept


class Add:
    """How to add one record of a model through its admin add form.

    `values(ctx, tag)` gives the fields a user types in (a fresh `tag` each time, for
    unique values); `lookup` names the field that finds the new record again; `clone`
    starts from an existing record's change form instead of the empty add form; `user`
    is who signs in (the lead by default).
    """

    def __init__(self, values, lookup, clone=None, user=None):
        self.values, self.lookup, self.clone, self.user = values, lookup, clone, user


def admin_add(ctx, model, spec):
    """Add a record through the admin; its pk, once committed with its log and history."""
    tag = uuid.uuid4().hex[:8]
    browser = ctx.client(spec.user(ctx) if spec.user else ctx.lead)
    if spec.clone is not None:
        source = spec.clone(ctx)
        data = without_inline_rows(
            admin_form(browser, admin_url(model, "change", source.pk), model)
        )
    else:
        data = admin_form(browser, admin_url(model, "add"), model)
    values = spec.values(ctx, tag)
    data.update(values)
    data["_save"] = "Save"
    response = browser.post(admin_url(model, "add"), data)
    redirected(response, f"adding {model._meta.label}")
    [pk] = committed(
        ctx, model._default_manager.filter(**{spec.lookup: values[spec.lookup]}), f"{values}"
    )
    obj = model._default_manager.get(pk=pk)
    logged(ctx, model, obj.pk, ADDITION)  # the admin's id (DRF's TokenProxy: the user's)
    history_kept(ctx, model, pk, "+")
    return obj


def add_case(label):
    def case(ctx):
        """The admin add form of the model.

        Nothing acknowledged is lost: the redirect after "Save" means the record, its
        admin log entry and (where kept) its history row are committed.
        """
        model = _model(label)
        obj = admin_add(ctx, model, ADMIN_ADD[label])
        _quietly_delete(model, real_pk(obj))  # the other cases find the canonical content

    return case


def real_pk(obj):
    """The primary key column's value (`obj.pk` is the admin's id, not always the same)."""
    return getattr(obj, obj._meta.pk.attname)


def _model(label):
    from django.apps import apps

    return apps.get_model(label)


def _quietly_delete(model, pk):
    from django.db import IntegrityError
    from django.db.models import ProtectedError, RestrictedError

    from mica.errors import InvalidTransition

    try:
        if model._meta.label == "methodology.Edition":
            delete_edition(pk)
        else:
            model._default_manager.filter(pk=pk).delete()
    except (ProtectedError, RestrictedError, IntegrityError, InvalidTransition):
        pass  # kept by the record, as a frozen version or a referenced row is


TEXT_FIELD_TYPES = ("CharField", "TextField")


def a_text_field(model, data):
    """A plain text field of the model that the change form offers with a value."""
    candidates = []
    for field in model._meta.concrete_fields:
        kinds = [cls.__name__ for cls in type(field).__mro__]
        plain = kinds[0] in TEXT_FIELD_TYPES or (
            "TranslationField" in kinds and any(k in TEXT_FIELD_TYPES for k in kinds[1:3])
        )
        if (
            plain
            and not field.choices
            and not field.unique
            and isinstance(data.get(field.name), str)
            and data[field.name].strip()
        ):
            candidates.append(field)
    assert candidates, f"{model._meta.label}: no text field to change in {sorted(data)}"
    english = [f for f in candidates if f.name.endswith("_en")]
    return (english or candidates)[0]


def edited(field, value):
    mark = f"(census {uuid.uuid4().hex[:6]})"
    if not value:
        return mark
    mark = " " + mark
    limit = field.max_length or len(value) + len(mark)
    return value[: limit - len(mark)] + mark


class Change:
    """How to change one record of a model through its admin change form.

    `pick(ctx)` gives the record (the first the lead may change by default), `field`
    the field to edit (a plain text field of the form by default), `value(ctx,
    original)` what the user types there (the text with a mark appended by default)
    and `expect(value)` what the database must then hold (the same by default).
    """

    def __init__(self, pick=None, field=None, value=None, expect=None):
        self.pick, self.field, self.value, self.expect = pick, field, value, expect


def first_changeable(ctx, model):
    from django.contrib import admin

    model_admin = admin.site._registry[model]
    request = census.superuser_request()
    request.user = ctx.lead
    for obj in model_admin.get_queryset(request).order_by("pk")[:200]:
        if model_admin.has_change_permission(request, obj):
            return obj
    raise AssertionError(f"{model._meta.label}: no record the lead may change")


def admin_change(ctx, label, obj=None):
    """Change one record through its change form; (record, field, value stored)."""
    model = _model(label)
    spec = ADMIN_CHANGE[label]
    obj = obj or (spec.pick(ctx) if spec.pick else first_changeable(ctx, model))
    browser = ctx.client(ctx.lead)
    url = admin_url(model, "change", obj.pk)
    data = admin_form(browser, url, model)
    field = model._meta.get_field(spec.field) if spec.field else a_text_field(model, data)
    row = model._default_manager.filter(pk=real_pk(obj))
    original = getattr(row.get(), field.attname)
    value = spec.value(ctx, data.get(field.name)) if spec.value else None
    data[field.name] = value if spec.value else edited(field, data[field.name])
    data["_save"] = "Save"
    response = browser.post(url, data)
    redirected(response, f"changing {model._meta.label} #{obj.pk}.{field.name}")
    expected = spec.expect(data[field.name]) if spec.expect else data[field.name]
    stored = ctx.observer.value(row, field.attname)
    assert stored == expected or str(stored) == str(expected), (
        f"{RULE} {label}.{field.name} is {stored!r}, not {expected!r}"
    )
    logged(ctx, model, row.get().pk, CHANGE)  # the admin's id, as it is after the change
    history_kept(ctx, model, real_pk(obj), "~")
    ctx.later(lambda: row.update(**{field.attname: original}))
    return obj, field, stored


def change_case(label):
    def case(ctx):
        """The admin change form of the model, posted back with one field changed.

        Nothing acknowledged is lost: the redirect after "Save" means the change, its
        admin log entry and (where kept) its history row are committed.
        """
        admin_change(ctx, label)

    return case


def revert_case(label):
    def case(ctx):
        """Reverting a record to an earlier revision from its history in the admin (the
        case changes it twice, then restores the first change).

        Nothing acknowledged is lost: "Revision N is restored as revision M." means the
        restored values, the new revision and the admin log entry are committed.
        """
        model = _model(label)
        obj, field, first = admin_change(ctx, label)
        admin_change(ctx, label, obj)
        history = model.history.model
        pk_name = model._meta.pk.attname
        *_earlier, before, _second = history.objects.filter(**{pk_name: obj.pk}).order_by(
            "history_date", "history_id"
        )
        browser = ctx.client(ctx.lead)
        meta = model._meta
        url = reverse(
            f"admin:{meta.app_label}_{meta.model_name}_simple_history",
            args=[obj.pk, before.history_id],
        )
        data = admin_form(browser, url, model)
        data["_save"] = "Save"
        logs = ctx.observer.count(LogEntry.objects.filter(object_id=str(obj.pk)))
        response = browser.post(url, data)
        messages = action_succeeded(browser, response)
        assert any("is restored" in text for _level, text in messages), messages
        stored = ctx.observer.value(model._default_manager.filter(pk=obj.pk), field.attname)
        assert stored == first, (
            f"{RULE} {label}.{field.name} reads {stored!r} after the revert, not {first!r}"
        )
        committed(
            ctx,
            history.objects.filter(
                **{pk_name: obj.pk}, history_change_reason__startswith="Reverted to revision"
            ),
            "(the revert's revision)",
        )
        assert ctx.observer.count(LogEntry.objects.filter(object_id=str(obj.pk))) > logs

    return case


def delete_case(label, how):
    def case(ctx):
        """Deleting a record in the admin, from its page or with the "delete selected" action.

        Nothing acknowledged is lost: the redirect after "Yes, I'm sure" means the
        deletion and its admin log entry are committed (and its history row, where kept).
        """
        model = _model(label)
        make = THROWAWAY.get(label) or (lambda ctx: admin_add(ctx, model, ADMIN_ADD[label]))
        made = make(ctx)
        obj = made if isinstance(made, Model) else model._default_manager.get(pk=made)
        pk, row = obj.pk, model._default_manager.filter(pk=real_pk(obj))
        browser = ctx.client(ctx.lead)
        if how == "page":
            url = admin_url(model, "delete", pk)
            confirm = browser.post(url, form_of(browser.get(url)))
        else:
            confirm = run_action(ctx, browser, model, "delete_selected", [pk], confirm=True)
        redirected(confirm, f"deleting {label} #{pk}")
        gone(ctx, row, f"#{pk}")
        logged(ctx, model, pk, DELETION)
        history_kept(ctx, model, real_pk(obj), "-")

    return case


def run_action(ctx, browser, model, action, pks, confirm=False):
    """Choose records on the model's list and run an action on them, as a user does."""
    changelist = admin_url(model, "changelist")
    page = form_of(browser.get(changelist), "changelist-form")
    data = {
        "csrfmiddlewaretoken": page["csrfmiddlewaretoken"],
        "action": action,
        "select_across": "0",
        "index": "0",
        "_selected_action": [str(pk) for pk in pks],
    }
    response = browser.post(changelist, data)
    if confirm:  # an intermediate page asks "Are you sure?"
        response = browser.post(changelist, form_of(response))
    return response


def action_messages(browser, response):
    """(level tag, text) of the messages an action left, read on the page it redirects to."""
    redirected(response)
    page = browser.get(response["Location"])
    return [(m.level_tag, str(m)) for m in page.context["messages"]]


def action_succeeded(browser, response):
    messages = action_messages(browser, response)
    errors = [text for level, text in messages if level == "error"]
    assert not errors and messages, messages
    return messages


# --- What the generic admin cases need, model by model ----------------------------------------


def a_user(ctx, **fields):
    return User.objects.create_user(f"census-{uuid.uuid4().hex[:8]}", **fields)


def a_market(code):
    from markets.models import Market

    return Market.objects.get(code=code)


def delete_edition(pk):
    """An edition and everything in it (its references and market editions protect it),
    once the case that made it is done."""
    from markets.models import MarketEdition
    from mica.methodology.models import Edition, Reference

    Edition.objects.filter(pk=pk).update(status="draft")  # a published one refuses deletes
    Reference.objects.filter(edition_id=pk).delete()
    MarketEdition.objects.filter(edition_id=pk).delete()
    Edition.objects.filter(pk=pk).delete()


def an_old_edition(ctx, status="superseded"):
    """A superseded edition: somewhere to add market records without touching the current one."""
    from mica.methodology.models import Edition

    edition = Edition.objects.create(
        slug=f"census-old-{uuid.uuid4().hex[:8]}",
        version_label_en="Census old edition",
        version_label_ko="센서스 이전 판",
        status=status,
    )
    ctx.later(lambda: delete_edition(edition.pk))
    return edition


def an_old_market_edition(ctx, code="KR"):
    """A market edition of a superseded edition, made while that edition was a draft: once
    it is not, its market editions are frozen (markets.frozen)."""
    from markets.models import MarketEdition
    from mica.methodology.models import Edition, EditionStatus

    edition = an_old_edition(ctx, status=EditionStatus.DRAFT)
    market_edition = MarketEdition.objects.create(
        market=a_market(code),
        edition=edition,
        **bilingual("edition_note", "Census."),
        **bilingual("profile_summary", "Census."),
    )
    Edition.objects.filter(pk=edition.pk).update(status=EditionStatus.SUPERSEDED)
    return market_edition


def a_census_market(ctx):
    """A market of the census's own, in no edition yet, removed afterwards."""
    from markets.models import Market, MarketEdition

    tag = uuid.uuid4().hex[:8]
    market = Market.objects.create(
        code=unused_market_code(),
        **bilingual("name", "Censusland"),
        **CENSUSLAND,
        display_order=100 + int(tag[:3], 16),
    )
    ctx.later(lambda: (MarketEdition.objects.filter(market=market).delete(), market.delete()))
    return market


def a_market_edition_now(ctx):
    """A market of the census's own in the current (draft) edition, removed afterwards."""
    from markets.models import MarketEdition

    return MarketEdition.objects.create(
        market=a_census_market(ctx),
        edition=ctx.edition(),
        **bilingual("edition_note", "Census."),
        **bilingual("profile_summary", "Census."),
    )


def the_first(model, **filters):
    return model._default_manager.filter(**filters).order_by("pk").first()


def in_edition(model, **filters):
    return lambda ctx: the_first(model, edition=ctx.edition(), **filters).pk


def bilingual(name, text):
    return {f"{name}_en": text, f"{name}_ko": f"{text} (ko)"}


def section(ctx, tag, **fields):
    return {"edition": ctx.edition().pk, "section_id": f"census-{tag}", "position": "1", **fields}


def a_task_definition(ctx, tag=None):
    from catalogue.models import TaskDefinition, TaskFamily

    definition = TaskDefinition.objects.create(
        slug=f"census-{tag or uuid.uuid4().hex[:8]}", family=the_first(TaskFamily)
    )
    ctx.later(lambda: _quietly_delete(TaskDefinition, definition.pk))
    return definition


def a_task_copy(ctx, source_slug="gc-resident-record-extract"):
    """A candidate task with its own current version: a copy of a canonical task."""
    from catalogue.models import TaskDefinition
    from catalogue.services import task_version_touch

    source = TaskDefinition.objects.get(slug=source_slug).current_version
    clauses, applicability = list(source.clauses.all()), list(source.applicability.all())
    definition = a_task_definition(ctx)
    version = source
    version.pk = version.id = None
    version.definition = definition
    # A new task's own version: not frozen, as the published canonical one may be.
    version.content_hash, version.frozen_at = "", None
    version.save()
    for record in clauses + applicability:
        record.pk = record.id = None
        record.version = version
        record.save()
    TaskDefinition.objects.filter(pk=definition.pk).update(current_version=version)
    return task_version_touch(version=version)


def a_version_without_reviews(ctx):
    from catalogue.models import TaskVersion

    return TaskVersion.objects.filter(reviews__isnull=True).order_by("pk").first()


def competent_author(ctx):
    from markets.models import CompetenceRole

    return competent(ctx, "census-kr-author", "KR", CompetenceRole.AUTHOR)


def competent_reviewer(ctx):
    from markets.models import CompetenceRole

    return competent(ctx, "census-kr-reviewer", "KR", CompetenceRole.REVIEWER)


def a_system(ctx, **fields):
    from submissions.models import System

    tag = uuid.uuid4().hex[:8]
    return System.objects.create(
        slug=f"census-{tag}", name=f"Census {tag}", operator="Census", **fields
    )


def a_withdrawal(ctx):
    from governance.models import Withdrawal

    return Withdrawal.objects.create(
        edition=ctx.edition(),
        **bilingual("figure", "Census figure"),
        **bilingual("where", "Census page"),
        original_value="0.5",
        **bilingual("reason", "Census reason."),
        decided_on=datetime.date.today(),
    )


def unused_market_code():
    import itertools
    import string

    from markets.models import Market

    taken = set(Market.objects.values_list("code", flat=True))
    return next(
        code
        for code in ("".join(p) for p in itertools.product(string.ascii_uppercase, repeat=2))
        if code.startswith("Z") and code not in taken
    )


TODAY = datetime.date.today().isoformat()

ADMIN_ADD = {
    "auth.Group": Add(lambda ctx, tag: {"name": f"census-{tag}"}, "name"),
    "auth.User": Add(
        lambda ctx, tag: {
            "username": f"census-{tag}",
            "usable_password": "true",
            "password1": "Census-pw-for-tests-only-1",
            "password2": "Census-pw-for-tests-only-1",
        },
        "username",
    ),
    "catalogue.ExposureEntry": Add(
        lambda ctx, tag: {
            "definition": a_task_definition(ctx, tag).pk,
            "at_0": TODAY,
            "at_1": "10:00:00",
            "where": f"census-{tag}",
            "artifact": "census",
        },
        "where",
    ),
    "catalogue.LocalReview": Add(
        lambda ctx, tag: {
            "version": a_version_without_reviews(ctx).pk,
            "market": a_market("KR").pk,
        },
        "version",
        user=competent_author,
    ),
    "catalogue.TaskDefinition": Add(
        lambda ctx, tag: {
            "slug": f"census-{tag}",
            "family": the_first(_model("catalogue.TaskFamily")).pk,
            "position": "1",
            "task_set": "public",
            "created_by_role": "author",
        },
        "slug",
    ),
    "catalogue.TaskFamily": Add(
        lambda ctx, tag: {
            "slug": f"census-{tag}",
            "position": str(100 + int(tag[:3], 16)),
            "task_prefix": f"Z{tag[:6]}",
            **bilingual("label", "Census family"),
            **bilingual("summary", "Census."),
            **bilingual("why_hard", "Census."),
            "timeout_seconds": "900",
        },
        "slug",
    ),
    "catalogue.TaskVersion": Add(
        lambda ctx, tag: {
            "definition": a_task_definition(ctx, tag).pk,
            "version": "1.0.0",
            **bilingual("title", "Census task"),
            **bilingual("final_state", "Done."),
            **bilingual("confirmation_boundary", "Before paying."),
            "evidence_requirements": the_first(
                _model("catalogue.TaskVersion")
            ).evidence_requirements,
            "parameter_schema-TOTAL": "0",
            "reference_status": "calibration-pending",
            "reference_method": "pilot-median",
            "reference_sample_size": "0",
        },
        "definition",
    ),
    "governance.DisclosureStatement": Add(
        lambda ctx, tag: {
            "key": f"census-{tag}",
            "category": "vendor-relationships",
            **bilingual("title", "Census statement"),
            **bilingual("statement", "Census statement text."),
            "basis": "self-declared",
            "confirmed_on": TODAY,
            "confirm_every_days": "180",
        },
        "key",
    ),
    "governance.PersonDeclaration": Add(lambda ctx, tag: {"user": a_user(ctx).pk}, "user"),
    "governance.Withdrawal": Add(
        lambda ctx, tag: {
            "edition": ctx.edition().pk,
            **bilingual("figure", f"census {tag}"),
            **bilingual("where", "Census page"),
            "original_value": "0.5",
            **bilingual("reason", "Census reason."),
            "decided_on": TODAY,
        },
        "figure_en",
    ),
    "markets.IntegrationSituation": Add(
        lambda ctx, tag: {"situation_id": f"kr-census-{tag}"},
        "situation_id",
        clone=lambda ctx: the_first(
            _model("markets.IntegrationSituation"),
            market_edition__edition=ctx.edition(),
            market_edition__market__code="KR",
        ),
    ),
    "markets.Market": Add(
        lambda ctx, tag: {
            "code": unused_market_code(),
            **bilingual("name", "Censusland"),
            **CENSUSLAND,
            "display_order": str(100 + int(tag[:3], 16)),
        },
        "native_name",
    ),
    "markets.MarketCompetence": Add(
        lambda ctx, tag: {
            "user": a_user(ctx, is_staff=True).pk,
            "market": a_market("KR").pk,
            "role": "author",
            "verified_by": ctx.lead.pk,
            "valid_until": TODAY,
        },
        "user",
    ),
    "methodology.LanguageCompetence": Add(
        lambda ctx, tag: {
            "user": a_user(ctx, is_staff=True).pk,
            "language": "ko",
            "verified_by": ctx.lead.pk,
            "valid_until": TODAY,
        },
        "user",
    ),
    # Into the draft edition, for a market of the census's own: a published edition's
    # market editions are frozen (markets.frozen), and its add form offers drafts only.
    "markets.MarketEdition": Add(
        lambda ctx, tag: {
            "market": a_census_market(ctx).pk,
            "edition": ctx.edition().pk,
            **bilingual("edition_note", "Census."),
            **bilingual("profile_summary", "Census."),
        },
        "market",
    ),
    "markets.PlatformRegistration": Add(
        lambda ctx, tag: {
            "market_edition": an_old_market_edition(ctx).pk,
            "task_family": "email-calendar",
        },
        "market_edition",
    ),
    "markets.PlatformOutage": Add(
        lambda ctx, tag: {
            "platform": a_registered_platform(ctx).pk,
            "first_day": TODAY,
            "last_day": TODAY,
            "evidence": f"https://status.example/census-{tag}",
        },
        "evidence",
    ),
    "methodology.Chapter": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "number": "99",
            **bilingual("title", "Census chapter"),
            **bilingual("lead", "Census."),
            "body": "items",
        },
        "section_id",
    ),
    "methodology.ChapterItem": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "chapter": in_edition(_model("methodology.Chapter"), body="items")(ctx),
            "item_type": "claim",
            "kind": "mica-policy",
            **bilingual("term", "Census claim"),
            **bilingual("detail", "Census detail."),
            "reference_keys": "[]",
        },
        "section_id",
    ),
    "methodology.ContractItem": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "contract_section": in_edition(_model("methodology.ContractSection"))(ctx),
            **bilingual("detail", "Census."),
        },
        "section_id",
    ),
    "methodology.ContractSection": Add(
        lambda ctx, tag: {**section(ctx, tag), **bilingual("title", "Census section")},
        "section_id",
    ),
    "methodology.Edition": Add(
        lambda ctx, tag: {
            "slug": f"census-added-{tag}",
            **bilingual("version_label", "Census edition"),
        },
        "slug",
    ),
    "methodology.GlossaryTerm": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            **bilingual("term", "Census term"),
            **bilingual("definition", "Census."),
        },
        "section_id",
    ),
    "methodology.PolicyLine": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            **bilingual("term", "Census policy"),
            **bilingual("detail", "Census."),
        },
        "section_id",
    ),
    "methodology.ReadingKind": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "kind": "mica-policy",
            **bilingual("label", "Census kind"),
            **bilingual("definition", "Census."),
        },
        "section_id",
    ),
    "methodology.Reference": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "key": f"census-{tag}",
            "group": in_edition(_model("methodology.ReferenceGroup"))(ctx),
            **bilingual("title", "Census reference"),
            "url": "https://example.org/census",
            # A citation names who issued the work, when, and where it appeared.
            "work_type": "software",
            "organisation_authors": "Census Organisation",
            "issued": "2026",
        },
        "section_id",
    ),
    "methodology.ReferenceGroup": Add(
        lambda ctx, tag: {
            **section(ctx, tag),
            "chapter": in_edition(_model("methodology.Chapter"))(ctx),
        },
        "section_id",
    ),
    "submissions.System": Add(
        lambda ctx, tag: {"slug": f"census-{tag}", "name": f"Census {tag}", "operator": "Census"},
        "slug",
    ),
    "submissions.SystemSnapshot": Add(
        lambda ctx, tag: {
            "system": a_system(ctx).pk,
            "version": "1.0",
            "snapshot_date": TODAY,
            "orchestrator": "census-orchestrator",
            "routable_models": '["census/model"]',
            "tools": '["browser"]',
            "memory": "None.",
            "market_capability": "{}",
            "track": "simulator",
            "data_status": "preview",
        },
        "system",
    ),
}

ADMIN_CHANGE = {
    "auth.Group": Change(
        pick=lambda ctx: _model("auth.Group").objects.create(name=f"census-{uuid.uuid4().hex[:8]}"),
        field="name",
    ),
    "auth.User": Change(pick=lambda ctx: a_user(ctx, first_name="Census")),
    "catalogue.TaskDefinition": Change(pick=lambda ctx: a_task_copy(ctx).definition),
    "catalogue.TaskFamily": Change(),
    "catalogue.TaskVersion": Change(pick=a_task_copy),
    "governance.PersonDeclaration": Change(
        pick=lambda ctx: _model("governance.PersonDeclaration").objects.create(user=a_user(ctx)),
        field="holdout_access",
        value=lambda ctx, original: "on",
        expect=lambda value: True,
    ),
    "governance.Withdrawal": Change(pick=a_withdrawal),
    "markets.IntegrationSituation": Change(),
    "markets.Market": Change(),
    "markets.MarketCompetence": Change(
        pick=lambda ctx: the_first(_model("markets.MarketCompetence"), user=competent_author(ctx)),
        field="valid_until",
        value=lambda ctx, original: (
            datetime.date.today() + datetime.timedelta(days=30)
        ).isoformat(),
    ),
    "markets.MarketEdition": Change(),
    "methodology.LanguageCompetence": Change(
        pick=lambda ctx: a_korean_reviewer(ctx).language_competences.get(),
        field="valid_until",
        value=lambda ctx, original: (
            datetime.date.today() + datetime.timedelta(days=30)
        ).isoformat(),
    ),
    "markets.PlatformRegistration": Change(
        pick=lambda ctx: _model("markets.PlatformRegistration").objects.create(
            market_edition=a_market_edition_now(ctx), task_family="email-calendar"
        ),
        field="supersede_reason_en",
    ),
    "methodology.Chapter": Change(),
    # Edited explicitly by case_claim_edit; this one is for the revert from its history.
    "methodology.ChapterItem": Change(
        pick=lambda ctx: the_first(
            _model("methodology.ChapterItem"), edition=ctx.edition(), item_type="claim"
        )
    ),
    "methodology.ContractItem": Change(),
    "methodology.ContractSection": Change(),
    "methodology.Edition": Change(pick=lambda ctx: ctx.edition()),
    "methodology.GlossaryTerm": Change(),
    "methodology.PolicyLine": Change(),
    "methodology.ReadingKind": Change(),
    "methodology.Reference": Change(),
    "methodology.ReferenceGroup": Change(),
    "submissions.System": Change(pick=a_system),
}


def _create(label, **fields):
    return lambda ctx: _model(label).objects.create(**fields).pk


def _the_cell_of_an_attempt(ctx):
    from governance.models import GateCell

    attempt = an_attempt(ctx)
    return GateCell.objects.get(
        snapshot_id=attempt.snapshot_id, market_id=attempt.market_id, family_id=attempt.family_id
    ).pk


# Records to delete for the models whose admin adds none (or adds through a page of its own).
THROWAWAY = {
    "site.ApiToken": lambda ctx: _model("knox.AuthToken").objects.create(user=a_user(ctx))[0].pk,
    "site.EnrolmentCode": lambda ctx: _an_enrolment_code(ctx, a_user(ctx, is_staff=True))[0].pk,
    "otp_totp.TOTPDevice": lambda ctx: (
        _model("otp_totp.TOTPDevice")
        .objects.create(user=a_user(ctx), name="census", confirmed=True)
        .pk
    ),
    "governance.Appeal": lambda ctx: an_appeal(ctx).pk,
    "governance.GateCell": _the_cell_of_an_attempt,
    "jobs.JobRun": _create("jobs.JobRun", job_name="census.job"),
    "jobs.WorkerHeartbeat": lambda ctx: (
        _model("jobs.WorkerHeartbeat")
        .objects.create(
            hostname=f"census-{uuid.uuid4().hex[:8]}", seen_at=datetime.datetime.now(datetime.UTC)
        )
        .pk
    ),
    "jobs.BeatLease": lambda ctx: (
        _model("jobs.BeatLease")
        .objects.create(
            name=f"census-{uuid.uuid4().hex[:8]}",
            holder="census",
            acquired_at=datetime.datetime.now(datetime.UTC),
            expires_at=datetime.datetime.now(datetime.UTC),
        )
        .pk
    ),
    "submissions.Attempt": lambda ctx: an_attempt(ctx).pk,
    "submissions.Challenge": lambda ctx: a_challenge().pk,
    "submissions.OutboxMessage": _create(
        "submissions.OutboxMessage", to="census@example.org", subject="Census", body="Census."
    ),
    "submissions.SystemSubmission": lambda ctx: a_system_submission().pk,
    "axes.AccessAttempt": lambda ctx: (
        _model("axes.AccessAttempt")
        .objects.create(
            username=f"census-{uuid.uuid4().hex[:8]}",
            ip_address="192.0.2.1",
            user_agent="census",
            failures_since_start=99,
        )
        .pk
    ),
}


# --- Admin decisions, actions and URLs, one by one -------------------------------------------


def decide_in_admin(ctx, model, obj, data, user=None):
    browser = ctx.client(user or ctx.lead)
    url = admin_url(model, "change", obj.pk)
    form = admin_form(browser, url, model)
    form.update(data)
    form["_save"] = "Save"
    response = browser.post(url, form)
    redirected(response, f"deciding {model._meta.label} #{obj.pk}")
    errors = [text for level, text in action_messages(browser, response) if level == "error"]
    assert not errors, errors
    logged(ctx, model, obj.pk, CHANGE)


def case_challenge_decision(ctx):
    """An editor screens a confirmed challenge from its admin page.

    Nothing acknowledged is lost: the redirect after "Save" means the new state and
    the decision's ChallengeEvent are committed.
    """
    from submissions.models import Challenge, ChallengeEvent

    challenge = a_challenge()
    decide_in_admin(ctx, Challenge, challenge, {"decision": "screen", "reason": "In scope."})
    committed(ctx, Challenge.objects.filter(pk=challenge.pk, state="screened"))
    committed(ctx, ChallengeEvent.objects.filter(challenge_id=challenge.pk, action="screen"))


def case_system_submission_decision(ctx):
    """Staff accept a system submission from its admin page.

    Nothing acknowledged is lost: the redirect after "Save" means the acceptance and
    the immutable snapshot it registers are committed.
    """
    from submissions.models import SystemSnapshot, SystemSubmission

    submission = a_system_submission()
    decide_in_admin(
        ctx, SystemSubmission, submission, {"decision": "accept", "reason": "Complete."}
    )
    committed(ctx, SystemSubmission.objects.filter(pk=submission.pk, state="accepted"))
    committed(ctx, SystemSnapshot.objects.filter(submission__pk=submission.pk))


def case_appeal_decision(ctx):
    """A lead other than the challenge's decider dismisses an appeal from its admin page.

    Nothing acknowledged is lost: the redirect after "Save" means the decision is
    committed.
    """
    from governance.models import Appeal

    appeal = an_appeal(ctx)
    decide_in_admin(
        ctx,
        Appeal,
        appeal,
        {"decision": "dismiss", "reason": "The decision stands."},
        user=ctx.world.second_lead,
    )
    committed(ctx, Appeal.objects.filter(pk=appeal.pk, state="dismissed"))
    history_kept(ctx, Appeal, appeal.pk, "~")


def case_disclosure_change(ctx):
    """An editor changes a statement of the disclosure register in the admin: a new
    statement supersedes it, and the old one stays as it was.

    Nothing acknowledged is lost: the redirect after "Save" means the new statement, its
    link to the old one, the old one's superseded date, the admin log entry and the new
    statement's history row are committed.
    """
    from governance.models import DisclosureStatement

    old = the_first(DisclosureStatement, superseded_at__isnull=True)
    text = f"{old.statement_en} (census {uuid.uuid4().hex[:6]})"
    browser = ctx.client(ctx.lead)
    url = admin_url(DisclosureStatement, "change", old.pk)
    data = admin_form(browser, url, DisclosureStatement)
    data.update(statement_en=text, _save="Save")
    redirected(browser.post(url, data), f"changing disclosure {old.key}")
    [pk] = committed(
        ctx, DisclosureStatement.objects.filter(supersedes=old, statement_en=text), text
    )
    committed(ctx, DisclosureStatement.objects.filter(pk=old.pk, superseded_at__isnull=False))
    logged(ctx, DisclosureStatement, pk, CHANGE)
    history_kept(ctx, DisclosureStatement, pk, "+")

    def restore():
        DisclosureStatement.objects.filter(pk=pk).delete()
        DisclosureStatement.objects.filter(pk=old.pk).update(superseded_at=None)

    ctx.later(restore)


def _a_statement_revision(ctx):
    from governance.models import DisclosureStatement

    statement = the_first(DisclosureStatement, superseded_at__isnull=True)
    revision = statement.history.latest()
    return reverse(
        "admin:governance_disclosurestatement_simple_history",
        args=[statement.pk, revision.history_id],
    )


def case_claim_edit(ctx):
    """The method lead edits a claim of the draft edition in the admin.

    Nothing acknowledged is lost: the redirect after "Save" means the claim's new
    text, its admin log entry and (where kept) its history row are committed.
    """
    from mica.methodology.models import ChapterItem

    claim = the_first(ChapterItem, edition=ctx.edition(), item_type="claim")
    browser = ctx.client(ctx.lead)
    url = admin_url(ChapterItem, "change", claim.pk)
    data = admin_form(browser, url, ChapterItem)
    detail = f"{claim.detail_en} (edited by the census {uuid.uuid4().hex[:6]})"
    data.update(detail_en=detail, _save="Save")
    redirected(browser.post(url, data), f"editing claim {claim.section_id}")
    committed(ctx, ChapterItem.objects.filter(pk=claim.pk, detail_en=detail))
    logged(ctx, ChapterItem, claim.pk, CHANGE)
    history_kept(ctx, ChapterItem, claim.pk, "~")
    ChapterItem.objects.filter(pk=claim.pk).update(detail_en=claim.detail_en)


def a_review(ctx, state="draft"):
    """A KR review of a task copy whose references are registered (a review of content
    that no approval could validate is never submitted), in `state`: draft, in review,
    or voided by an edit after its approval."""
    from catalogue.models import LocalReview, TaskVersion
    from catalogue.services import review_open, task_version_touch
    from catalogue.workflows import review_transition
    from tests.factories import references_registered

    author = competent_author(ctx)
    version = references_registered(a_task_copy(ctx))
    review = review_open(version=version, market=a_market("KR"), actor=author)
    if state in ("in-review", "voided"):
        review_transition(review_id=review.pk, action="submit", actor=author)
    if state == "voided":
        review_transition(review_id=review.pk, action="approve", actor=competent_reviewer(ctx))
        TaskVersion.objects.filter(pk=version.pk).update(title_en="Census task, edited")
        task_version_touch(version=TaskVersion.objects.get(pk=version.pk), actor=author)
    return LocalReview.objects.get(pk=review.pk)


def review_action_case(action, start, user, end):
    def case(ctx):
        """A local review moved by its admin action (four eyes: author submits,
        another competent reviewer decides).

        Nothing acknowledged is lost: the action's success message means the new
        state and its ReviewEvent are committed.
        """
        from catalogue.models import LocalReview, ReviewEvent

        review = a_review(ctx, start)
        browser = ctx.client(user(ctx))
        action_succeeded(browser, run_action(ctx, browser, LocalReview, action, [review.pk]))
        committed(ctx, LocalReview.objects.filter(pk=review.pk, state=end))
        committed(ctx, ReviewEvent.objects.filter(review_id=review.pk, action=action))

    return case


def case_request_changes(ctx):
    """A competent reviewer sends a review back, writing the request on the page the
    action opens.

    Nothing acknowledged is lost: "Changes were requested on …" means the new state and
    the ReviewEvent carrying the request are committed.
    """
    from catalogue.models import LocalReview, ReviewEvent

    review = a_review(ctx, "in-review")
    browser = ctx.client(competent_reviewer(ctx))
    asked = run_action(ctx, browser, LocalReview, "request_changes", [review.pk])
    request = "Name the confirmation screen."
    data = {**form_of(asked), "reason": request}
    action_succeeded(browser, browser.post(admin_url(LocalReview, "changelist"), data))
    committed(ctx, LocalReview.objects.filter(pk=review.pk, state="changes-requested"))
    committed(ctx, ReviewEvent.objects.filter(review_id=review.pk, reason=request))


def case_review_comment(ctx):
    """A competent reviewer writes a comment on the review's page (the page changes the
    review itself only through its actions).

    Nothing acknowledged is lost: the redirect after "Save" means the comment, its admin
    log entry and its history row are committed.
    """
    from catalogue.models import LocalReview, ReviewComment

    review = a_review(ctx, "in-review")
    browser = ctx.client(competent_reviewer(ctx))
    url = admin_url(LocalReview, "change", review.pk)
    data = admin_form(browser, url, LocalReview)
    body = f"Census comment {uuid.uuid4().hex[:8]}"
    data.update({"comments-2-0-anchor": "final_state", "comments-2-0-body": body})
    redirected(browser.post(url, data))
    committed(ctx, ReviewComment.objects.filter(review_id=review.pk, body=body))
    logged(ctx, LocalReview, review.pk, CHANGE)
    history_kept(ctx, ReviewComment, ReviewComment.objects.get(body=body).pk, "+")


def case_promote(ctx):
    """The method lead promotes a candidate task whose every gap is closed.

    Nothing acknowledged is lost: "…is validated." means the new lifecycle is committed.
    """
    from catalogue.models import MarketApplicability, TaskDefinition, TaskVersion
    from catalogue.services import task_version_touch
    from catalogue.workflows import review_transition

    version = a_task_copy(ctx)
    TaskVersion.objects.filter(pk=version.pk).update(
        reference_status="registered",
        reference_sample_size=12,
        speed_reference_seconds=240,
        cost_reference_usd="0.4200",
    )
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    version = task_version_touch(version=TaskVersion.objects.get(pk=version.pk))
    review = _model("catalogue.LocalReview").objects.create(
        version=version, market=a_market("KR"), author=competent_author(ctx)
    )
    review_transition(review_id=review.pk, action="submit", actor=competent_author(ctx))
    review_transition(review_id=review.pk, action="approve", actor=competent_reviewer(ctx))
    browser = ctx.client(ctx.lead)
    definition = version.definition
    response = run_action(ctx, browser, TaskDefinition, "promote", [definition.pk])
    assert any("is validated" in text for _level, text in action_succeeded(browser, response))
    committed(ctx, TaskDefinition.objects.filter(pk=definition.pk, lifecycle="validated"))
    history_kept(ctx, TaskDefinition, definition.pk, "~")


def a_validated_task(ctx):
    """A task copy with every gap of validation closed, promoted: its current version."""
    from catalogue.models import MarketApplicability, TaskVersion
    from catalogue.services import task_version_touch

    version = a_task_copy(ctx)
    TaskVersion.objects.filter(pk=version.pk).update(
        reference_status="registered",
        reference_sample_size=12,
        speed_reference_seconds=240,
        cost_reference_usd="0.4200",
    )
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    version = task_version_touch(version=TaskVersion.objects.get(pk=version.pk))
    approve_in_kr(ctx, version)
    return version


def approve_in_kr(ctx, version):
    from catalogue.workflows import review_transition

    review = _model("catalogue.LocalReview").objects.create(
        version=version, market=a_market("KR"), author=competent_author(ctx)
    )
    review_transition(review_id=review.pk, action="submit", actor=competent_author(ctx))
    review_transition(review_id=review.pk, action="approve", actor=competent_reviewer(ctx))


def case_promote_task_on_a_version(ctx):
    """The method lead promotes a task on the version chosen in the versions' list.

    Nothing acknowledged is lost: "…is validated." means the lifecycle and its event are
    committed.
    """
    from catalogue.models import TaskDefinition, TaskEvent, TaskVersion

    version = a_validated_task(ctx)
    browser = ctx.client(ctx.lead)
    response = run_action(ctx, browser, TaskVersion, "promote_task", [version.pk])
    assert any("is validated" in text for _level, text in action_succeeded(browser, response))
    definition = version.definition
    committed(ctx, TaskDefinition.objects.filter(pk=definition.pk, lifecycle="validated"))
    committed(ctx, TaskEvent.objects.filter(definition=definition, action="promote"))
    history_kept(ctx, TaskDefinition, definition.pk, "~")


def case_make_current(ctx):
    """The method lead makes a reviewed newer version of a validated task current.

    Nothing acknowledged is lost: "…is now current." means the current version and its
    event are committed.
    """
    from catalogue.models import TaskDefinition, TaskEvent, TaskVersion
    from catalogue.services import task_promote, task_version_start_next

    version = a_validated_task(ctx)
    task_promote(definition_id=version.definition_id, actor=ctx.lead)
    # Validated, the version is frozen: the newer one is started from it.
    newer = task_version_start_next(version_id=version.pk, actor=ctx.lead)
    approve_in_kr(ctx, newer)
    browser = ctx.client(ctx.lead)
    response = run_action(ctx, browser, TaskVersion, "make_current", [newer.pk])
    assert any("is now current" in text for _level, text in action_succeeded(browser, response))
    definition_id = version.definition_id
    committed(ctx, TaskDefinition.objects.filter(pk=definition_id, current_version=newer))
    committed(ctx, TaskEvent.objects.filter(definition_id=definition_id, action="make_current"))
    history_kept(ctx, TaskDefinition, definition_id, "~")


def case_start_next_version(ctx):
    """An author starts a new version from a frozen one, with the button of its page.

    Nothing acknowledged is lost: "…is a new draft copied from…" means the draft, its
    clauses and applicability are committed, with their history.
    """
    from catalogue.models import ContractClause, TaskVersion
    from catalogue.services import task_promote

    version = a_validated_task(ctx)
    task_promote(definition_id=version.definition_id, actor=ctx.lead)
    browser = ctx.client(ctx.lead)
    page = browser.get(admin_url(TaskVersion, "change", version.pk)).content.decode()
    token = census.form_data(page, "taskversion_form")["csrfmiddlewaretoken"]
    assert 'id="start-next-version"' in page
    response = browser.post(
        admin_url(TaskVersion, "start_next", version.pk), {"csrfmiddlewaretoken": token}
    )
    said = [text for _level, text in action_succeeded(browser, response)]
    assert any("is a new draft copied from" in text for text in said), said
    drafts = TaskVersion.objects.filter(definition_id=version.definition_id, version="1.1.0")
    committed(ctx, drafts)
    draft = drafts.get()
    committed(ctx, ContractClause.objects.filter(version_id=draft.pk))
    history_kept(ctx, TaskVersion, draft.pk, "+")


def case_retire(ctx):
    """The method lead retires a task with a reason, on the page that asks for it.

    Nothing acknowledged is lost: "…is retired." means the lifecycle and the event that
    keeps the reason are committed.
    """
    from catalogue.models import TaskDefinition, TaskEvent

    definition = a_task_copy(ctx).definition
    browser = ctx.client(ctx.lead)
    asked = run_action(ctx, browser, TaskDefinition, "retire", [definition.pk])
    data = form_of(asked)
    data["reason"] = "A duplicate of another task."
    response = browser.post(admin_url(TaskDefinition, "changelist"), data)
    assert any("is retired" in text for _level, text in action_succeeded(browser, response))
    committed(ctx, TaskDefinition.objects.filter(pk=definition.pk, lifecycle="retired"))
    committed(
        ctx,
        TaskEvent.objects.filter(definition=definition, reason="A duplicate of another task."),
    )
    history_kept(ctx, TaskDefinition, definition.pk, "~")


def case_pre_register(ctx):
    """A platform set is pre-registered (frozen) by its admin action.

    Nothing acknowledged is lost: "…is pre-registered." means the frozen state is committed.
    """
    from markets.models import PlatformRegistration

    registration = PlatformRegistration.objects.create(
        market_edition=an_old_market_edition(ctx), task_family="email-calendar"
    )
    _a_platform(registration)
    browser = ctx.client(ctx.lead)
    response = run_action(ctx, browser, PlatformRegistration, "pre_register", [registration.pk])
    action_succeeded(browser, response)
    committed(
        ctx,
        PlatformRegistration.objects.filter(
            pk=registration.pk, status="registered", registered_at__isnull=False
        ),
    )


def case_start_replacement(ctx):
    """A frozen platform set's replacement is drafted by its admin action, with the reason
    in English and Korean asked on the page the action opens.

    Nothing acknowledged is lost: "A draft replacing … is ready to edit" means the draft,
    naming the set it supersedes and why, and its platforms are committed.
    """
    from markets.models import PlatformRegistration

    frozen = PlatformRegistration.objects.create(
        market_edition=an_old_market_edition(ctx),
        task_family="email-calendar",
        status="registered",
    )
    _a_platform(frozen)
    # The draft names the set it supersedes, which protects it: gone first.
    ctx.later(lambda: PlatformRegistration.objects.filter(supersedes=frozen).delete())
    browser = ctx.client(ctx.lead)
    asked = run_action(ctx, browser, PlatformRegistration, "start_replacement", [frozen.pk])
    data = {
        **form_of(asked),
        "reason_en": "The primary closed its calendar.",
        "reason_ko": "주 플랫폼이 캘린더를 닫았습니다.",
    }
    response = browser.post(admin_url(PlatformRegistration, "changelist"), data)
    action_succeeded(browser, response)
    [draft] = committed(
        ctx,
        PlatformRegistration.objects.filter(
            supersedes=frozen, status="draft", supersede_reason_ko=data["reason_ko"]
        ),
    )
    committed(ctx, _model("markets.RepresentativePlatform").objects.filter(registration=draft))


def a_registered_platform(ctx):
    """The primary platform of KR's shipped e-mail and calendar set (pre-registered)."""
    return _model("markets.RepresentativePlatform").objects.get(
        registration__market_edition__market__code="KR",
        registration__market_edition__edition=ctx.edition(),
        registration__task_family="email-calendar",
        registration__status="registered",
        rank=1,
    )


def case_outage_decision(ctx):
    """Staff other than its reporter accept a platform outage from its admin page.

    Nothing acknowledged is lost: the redirect after "Save" means the new state and the
    decision's OutageEvent are committed.
    """
    from markets.models import OutageEvent, PlatformOutage
    from markets.workflows import outage_report

    outage = outage_report(
        platform=a_registered_platform(ctx),
        first_day=TODAY,
        last_day=TODAY,
        evidence="https://status.example/census",
        actor=ctx.lead,
    )
    ctx.later(lambda: (outage.events.all().delete(), outage.delete()))
    decide_in_admin(
        ctx,
        PlatformOutage,
        outage,
        {"decision": "accept", "reason": "The status page agrees."},
        user=ctx.world.second_lead,
    )
    committed(ctx, PlatformOutage.objects.filter(pk=outage.pk, state="accepted"))
    committed(ctx, OutageEvent.objects.filter(outage=outage, actor=ctx.world.second_lead))


def _a_platform(registration):
    from markets.models import RepresentativePlatform

    fields = {
        f.name: "Census"
        for f in RepresentativePlatform._meta.concrete_fields
        if f.get_internal_type() in ("CharField", "TextField") and not f.choices
    }
    fields.update(
        registration=registration,
        rank=1,
        kind="web",
        snapshot_date=TODAY,
        source="https://example.org/census",
        source_accessed=TODAY,
    )
    return RepresentativePlatform.objects.create(**fields)


def a_korean_reviewer(ctx):
    """Staff with a Korean language competence the lead verified, who may approve claims."""
    from django.contrib.auth.models import Permission

    from mica.methodology.models import LanguageCompetence

    reviewer = ctx.world.user("census-ko-reviewer", is_staff=True)
    reviewer.user_permissions.add(*Permission.objects.filter(content_type__app_label="methodology"))
    LanguageCompetence.objects.get_or_create(
        user=reviewer,
        language="ko",
        defaults={
            "verified_by": ctx.lead,
            "valid_until": datetime.date.today() + datetime.timedelta(days=90),
        },
    )
    return reviewer


def case_approve_korean(ctx):
    """A reviewer competent in Korean approves a claim's Korean text against its English
    source.

    Nothing acknowledged is lost: "Korean text approved…" means the approval (the
    digest it covers, who and when) is committed.
    """
    from mica.methodology.models import ChapterItem

    reviewer = a_korean_reviewer(ctx)
    claim = the_first(ChapterItem, edition=ctx.edition(), item_type="claim")
    ChapterItem.objects.filter(pk=claim.pk).update(korean_approved_digest="")
    browser = ctx.client(reviewer)
    response = run_action(ctx, browser, ChapterItem, "approve_korean", [claim.pk])
    action_succeeded(browser, response)
    committed(
        ctx,
        ChapterItem.objects.filter(pk=claim.pk, korean_approved_by=reviewer).exclude(
            korean_approved_digest=""
        ),
    )


def case_invalidate_attempt(ctx):
    """MICA staff invalidate an attempt, giving the reason on the page the action opens.

    Nothing acknowledged is lost: "… is invalidated." means the decision (role, reason,
    who) is committed, and the attempt itself is still there.
    """
    from submissions.models import Attempt, AttemptInvalidation

    attempt = an_attempt(ctx)
    browser = ctx.client(ctx.lead)
    asked = run_action(ctx, browser, Attempt, "invalidate", [attempt.pk])
    data = {**form_of(asked), "reason": "The replica served a stale calendar."}
    response = browser.post(admin_url(Attempt, "changelist"), data)
    action_succeeded(browser, response)
    committed(ctx, AttemptInvalidation.objects.filter(attempt=attempt, actor=ctx.lead))
    committed(ctx, Attempt.objects.filter(pk=attempt.pk))


def case_reverse_invalidation(ctx):
    """MICA staff reverse an invalidation, giving the reason on the page the action opens.

    Nothing acknowledged is lost: "… counts again." means the later decision (role,
    reason, who) is committed beside the invalidation, which stays in the record.
    """
    from submissions.invalidation import attempt_invalidate
    from submissions.models import Attempt, AttemptInvalidation, InvalidationReversal

    attempt = an_attempt(ctx)
    attempt_invalidate(attempt_id=attempt.pk, reason="A stale replica.", actor=ctx.lead)
    browser = ctx.client(ctx.lead)
    asked = run_action(ctx, browser, Attempt, "reverse_invalidation", [attempt.pk])
    data = {**form_of(asked), "reason": "The replica was current after all."}
    response = browser.post(admin_url(Attempt, "changelist"), data)
    action_succeeded(browser, response)
    committed(ctx, InvalidationReversal.objects.filter(invalidation__attempt=attempt))
    committed(ctx, AttemptInvalidation.objects.filter(attempt=attempt))


def flush_declined(ctx):
    """`flush` asked on a terminal and answered "no"."""
    from unittest import mock

    def action():
        with mock.patch("builtins.input", return_value="no"):
            run_command("flush")

    return action


def case_start_draft(ctx):
    """The method lead starts a new draft edition from the current one.

    Nothing acknowledged is lost: "Draft … started." means the new edition and every
    record copied into it are committed.
    """
    from mica.methodology.models import ChapterItem, Edition

    source = ctx.edition()
    before = set(Edition.objects.values_list("pk", flat=True))
    browser = ctx.client(ctx.lead)
    response = run_action(ctx, browser, Edition, "start_draft", [source.pk])
    action_succeeded(browser, response)
    drafts = committed(ctx, Edition.objects.exclude(pk__in=before), "(the new draft)")
    ctx.later(lambda: [delete_edition(pk) for pk in drafts])
    claims = ctx.observer.count(ChapterItem.objects.filter(edition_id=drafts[0]))
    assert claims == ChapterItem.objects.filter(edition=source).count() > 0, claims


def case_publish(ctx):
    """The method lead publishes a draft edition.

    Nothing acknowledged is lost: "… is published." means the published status is
    committed. (The case then puts the canonical draft back as the current edition.)
    """
    from mica.methodology.models import Edition, EditionStatus
    from mica.methodology.services import edition_start_draft

    draft = edition_start_draft(source=ctx.edition(), slug=f"census-{uuid.uuid4().hex[:8]}")
    ctx.later(lambda: delete_edition(draft.pk))
    browser = ctx.client(ctx.lead)
    response = run_action(ctx, browser, Edition, "publish", [draft.pk], confirm=True)
    action_succeeded(browser, response)
    committed(ctx, Edition.objects.filter(pk=draft.pk, status=EditionStatus.PUBLISHED))
    history_kept(ctx, Edition, draft.pk, "~")


def case_start_jobs(ctx):
    """A superuser starts each on-demand job from the job list.

    Nothing acknowledged is lost: "…: queued as run N." means JobRun N is committed,
    and here (jobs run in this process after commit) that it ran to success.
    """
    from mica.jobs.models import JobRun
    from mica.jobs.registry import on_demand_jobs

    ctx.settings.EXPORT_DIR = ctx.tmp_path / "exports"
    browser = ctx.client(ctx.lead)
    for key in on_demand_jobs():
        page = form_of(browser.get(reverse("admin:jobs_jobrun_changelist")), "changelist-form")
        response = browser.post(
            reverse("admin:jobs_jobrun_start", args=[key]),
            {"csrfmiddlewaretoken": page["csrfmiddlewaretoken"]},
        )
        [(level, text)] = action_messages(browser, response)
        run = int(re.search(r"run (\d+)", text).group(1))
        committed(ctx, JobRun.objects.filter(pk=run, state="succeeded"), f"({key}: {text})")


def case_admin_login(ctx):
    """Signing in to the admin.

    Nothing acknowledged is lost: the redirect into the admin means the session is
    committed.
    """
    from django.contrib.sessions.models import Session

    user = a_user(ctx, is_staff=True, password="pw-for-tests-only")
    browser = ctx.client()
    data = form_of(browser.get(reverse("admin:login")), "login-form")
    data.update(username=user.username, password="pw-for-tests-only")
    redirected(browser.post(reverse("admin:login"), data))
    committed(ctx, Session.objects.filter(session_key=browser.session.session_key))


def case_unlock_sign_in(ctx):
    """Unlocking a locked-out sign-in in the admin ("Unlock the selected sign-ins").

    Nothing acknowledged is lost: "unlocked" means the lockout is gone and the admin's
    log says who unlocked it.
    """
    model = _model("axes.AccessAttempt")
    pk = THROWAWAY["axes.AccessAttempt"](ctx)
    browser = ctx.client(ctx.lead)
    action_succeeded(browser, run_action(ctx, browser, model, "unlock", [pk]))
    gone(ctx, model.objects.filter(pk=pk))
    logged(ctx, model, pk, DELETION)


def _signed_in_with_password(ctx, user):
    browser = ctx.client()
    data = form_of(browser.get(reverse("admin:login")), "login-form")
    data.update(username=user.username, password="pw-for-tests-only")
    redirected(browser.post(reverse("admin:login"), data))
    return browser


def _code(device):
    from django_otp.oath import totp

    return f"{totp(device.bin_key, step=device.step, t0=device.t0):06d}"


def case_second_factor(ctx):
    """The admin's second step: a TOTP code after the password.

    Nothing acknowledged is lost: the redirect into the admin means the device's last
    used step is committed (the same code cannot open a second session).
    """
    from django_otp.plugins.otp_totp.models import TOTPDevice

    user = a_user(ctx, is_staff=True, is_superuser=True, password="pw-for-tests-only")
    device = TOTPDevice.objects.create(user=user, name="census", confirmed=True)
    browser = _signed_in_with_password(ctx, user)
    data = form_of(browser.get(reverse("second-factor")), "second-factor-form")
    data["code"] = _code(device)
    redirected(browser.post(reverse("second-factor"), data))
    committed(ctx, TOTPDevice.objects.filter(pk=device.pk, last_t__gte=0))


def _an_enrolment_code(ctx, user):
    from mica.site.enrolment import enrolment_code_issue

    return enrolment_code_issue(user=user, actor=None)


def case_second_factor_enrol(ctx):
    """Enrolling a TOTP device for the admin's second step, with the one-time enrolment
    code another administrator issued.

    Nothing acknowledged is lost: the redirect into the admin means the device is
    committed as confirmed and the code as spent.
    """
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from mica.site.models import EnrolmentCode

    user = a_user(ctx, is_staff=True, is_superuser=True, password="pw-for-tests-only")
    record, code = _an_enrolment_code(ctx, user)
    browser = _signed_in_with_password(ctx, user)
    data = form_of(browser.get(reverse("second-factor-enrol")), "enrolment-code-form")
    data["enrolment_code"] = code
    redirected(browser.post(reverse("second-factor-enrol"), data))
    data = form_of(browser.get(reverse("second-factor-enrol")), "second-factor-form")
    data["code"] = _code(TOTPDevice.objects.get(user=user))
    redirected(browser.post(reverse("second-factor-enrol"), data))
    committed(ctx, TOTPDevice.objects.filter(user=user, confirmed=True))
    committed(ctx, EnrolmentCode.objects.filter(pk=record.pk, used_at__isnull=False))


def _shown_once_add(ctx, label, data, lookup):
    """An add form whose answer shows a secret once instead of redirecting; the row and
    the admin's log entry are committed when it does."""
    model = _model(label)
    browser = ctx.client(ctx.lead)
    form = admin_form(browser, admin_url(model, "add"), model)
    form.update(data, _save="Save")
    response = browser.post(admin_url(model, "add"), form)
    assert response.status_code == 200 and 'id="shown-once"' in response.text, (
        response.status_code,
        _errors(response),
    )
    [pk] = committed(ctx, model._default_manager.filter(**lookup))
    logged(ctx, model, pk, ADDITION)
    _quietly_delete(model, pk)


def case_api_token_issue(ctx):
    """Issuing an API token in the admin (a verified superuser): the key shown once.

    Nothing acknowledged is lost: the page that shows the key means its digest and the
    admin's log entry are committed.
    """
    user = a_user(ctx)
    _shown_once_add(ctx, "site.ApiToken", {"user": str(user.pk)}, {"user": user})


def case_enrolment_code_issue(ctx):
    """Issuing a second-factor enrolment code in the admin: the code shown once.

    Nothing acknowledged is lost: the page that shows the code means its digest, the
    admin's log entry and the notices in the outbox are committed.
    """
    from submissions.models import OutboxMessage

    user = a_user(ctx, is_staff=True, email="census-enrol@example.org")
    _shown_once_add(ctx, "site.EnrolmentCode", {"user": str(user.pk)}, {"user": user})
    committed(ctx, OutboxMessage.objects.filter(to="census-enrol@example.org"))


def case_issue_enrolment_code(ctx):
    """`issue_enrolment_code USERNAME` on the server, for the first administrator.

    Nothing acknowledged is lost: the printed code means its digest is committed.
    """
    from mica.site.models import EnrolmentCode

    user = a_user(ctx, is_staff=True, is_superuser=True)
    code = run_command("issue_enrolment_code", user.username).strip()
    assert code, "no code printed"
    committed(ctx, EnrolmentCode.objects.filter(user=user, issued_by=None))


def _a_device_url(name):
    def path(ctx):
        from django_otp.plugins.otp_totp.models import TOTPDevice

        device = TOTPDevice.objects.create(user=a_user(ctx), name="census")
        return reverse(f"admin:{name}", args=[device.pk])

    return path


def case_admin_logout(ctx):
    """Signing out of the admin.

    Nothing acknowledged is lost: "Logged out" means the session is deleted for good.
    """
    from django.contrib.sessions.models import Session

    browser = ctx.client(a_user(ctx, is_staff=True))
    key = browser.session.session_key
    page = browser.get(reverse("admin:index"))
    data = form_of(page, "logout-form")
    response = browser.post(reverse("admin:logout"), data)
    assert response.status_code == 200 and "Logged out" in response.text
    gone(ctx, Session.objects.filter(session_key=key), "(the signed-out session)")


def _password_changed(ctx, user, password):
    from django.contrib.auth.hashers import check_password

    stored = ctx.observer.value(User.objects.filter(pk=user.pk), "password")
    assert check_password(password, stored), f"{RULE} the new password of {user} is not stored"


def case_own_password_change(ctx):
    """A staff user changes their own password in the admin.

    Nothing acknowledged is lost: the redirect to "Password change successful" means
    the new password is committed.
    """
    user = a_user(ctx, is_staff=True, password="pw-for-tests-only")
    browser = ctx.client(user)
    url = reverse("admin:password_change")
    data = form_of(browser.get(url), None)
    new = "Census-new-pw-for-tests-only-2"
    data.update(old_password="pw-for-tests-only", new_password1=new, new_password2=new)
    assert redirected(browser.post(url, data)) == reverse("admin:password_change_done")
    _password_changed(ctx, user, new)


def case_set_password(ctx):
    """The lead sets another user's password in the admin.

    Nothing acknowledged is lost: the redirect after "Change password" means the new
    password and its admin log entry are committed.
    """
    user = a_user(ctx)
    browser = ctx.client(ctx.lead)
    url = reverse("admin:auth_user_password_change", args=[user.pk])
    data = form_of(browser.get(url), None)
    new = "Census-set-pw-for-tests-only-3"
    data.update(password1=new, password2=new, usable_password="true")
    redirected(browser.post(url, data))
    _password_changed(ctx, user, new)
    logged(ctx, User, user.pk, CHANGE)


# --- Management commands ---------------------------------------------------------------------


def run_command(*arguments):
    out = io.StringIO()
    call_command(*arguments, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def case_load_canonical_content(ctx):
    """`load_canonical_content` creates what is missing.

    Nothing acknowledged is lost: "Canonical content loaded." means a record missing
    from the database is committed again.
    """
    from mica.methodology.models import GlossaryTerm

    term = GlossaryTerm.objects.filter(edition=ctx.edition()).order_by("pk").last()
    GlossaryTerm.objects.filter(pk=term.pk).delete()
    assert "Canonical content loaded." in run_command("load_canonical_content")
    committed(
        ctx,
        GlossaryTerm.objects.filter(edition=ctx.edition(), section_id=term.section_id),
        f"(the glossary term {term.section_id} the load had to create again)",
    )


def case_ingest_attempts(ctx):
    """`ingest_attempts FILE --as-user STAFF` records a JSON Lines file, all or nothing.

    Nothing acknowledged is lost: "2 attempts recorded" means both are committed.
    """
    from submissions.ingest import recording_grant
    from submissions.models import Attempt

    the_operator(ctx)
    staff = ctx.user("census-staff", is_staff=True)
    recording_grant(staff)  # staff who record reruns
    ids = [f"census-file-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    path = ctx.tmp_path / "attempts.jsonl"
    path.write_text(
        "".join(
            json.dumps(attempt_payload(attempt_id=i, verification="independent-rerun")) + "\n"
            for i in ids
        )
    )
    assert "2 attempts recorded" in run_command(
        "ingest_attempts", str(path), "--as-user", staff.username
    )
    assert len(committed(ctx, Attempt.objects.filter(attempt_id__in=ids))) == 2, RULE


def case_load_demo_runs(ctx):
    """`load_demo_runs` records the labelled synthetic run set.

    Nothing acknowledged is lost: "N demo attempts recorded" means N demo attempts
    are committed.
    """
    from submissions.models import Attempt, DataStatus

    demo = Attempt.objects.filter(snapshot__data_status=DataStatus.DEMO)
    before = ctx.observer.count(demo)
    output = run_command("load_demo_runs")
    recorded = int(re.search(r"(\d+) demo attempts recorded", output).group(1))
    assert before + recorded > 0 and ctx.observer.count(demo) == before + recorded, RULE


def case_rerun_gate(ctx):
    """`rerun_gate --sync` rebuilds every gate cell here; `rerun_gate` queues a JobRun.

    Nothing acknowledged is lost: "Gate rerun over N cells." means N cells are
    committed; "Queued … as job run N." means JobRun N is (and, run in this process,
    that it succeeded).
    """
    from governance.models import GateCell
    from mica.jobs.models import JobRun

    an_attempt(ctx)
    GateCell.objects.all().delete()
    output = run_command("rerun_gate", "--sync")
    cells = int(re.search(r"Gate rerun over (\d+) cells", output).group(1))
    assert cells > 0 and ctx.observer.count(GateCell.objects.all()) == cells, RULE
    run = int(re.search(r"job run (\d+)", run_command("rerun_gate")).group(1))
    committed(ctx, JobRun.objects.filter(pk=run, state="succeeded"), f"(JobRun {run})")


def case_regenerate_exports(ctx):
    """`regenerate_exports --sync` publishes the export set here; without it, a JobRun.

    Nothing acknowledged is lost: "Published to …" means the set and its manifest are
    on disk; "Queued … as job run N." means JobRun N is committed (and succeeded).
    """
    from mica.jobs.models import JobRun

    ctx.settings.EXPORT_DIR = ctx.tmp_path / "exports"
    assert "Published to" in run_command("regenerate_exports", "--sync")
    manifest = json.loads((ctx.settings.EXPORT_DIR / "current" / "manifest.json").read_text())
    assert manifest["files"]
    run = int(re.search(r"job run (\d+)", run_command("regenerate_exports")).group(1))
    committed(ctx, JobRun.objects.filter(pk=run, state="succeeded"), f"(JobRun {run})")


def case_bake_pages(ctx):
    """`bake_pages --sync` publishes the baked pages here; without it, a JobRun.

    Nothing acknowledged is lost: "Baked N pages into …" means the pages and their
    manifest are on disk; "Queued … as job run N." means JobRun N is committed.
    """
    from mica.jobs.models import JobRun

    ctx.settings.PAGE_BAKE_DIR = ctx.tmp_path / "pages"
    ctx.settings.PAGE_CACHE_SECONDS = 600  # the bake covers the pages the page cache serves
    baked = int(re.search(r"Baked (\d+) pages", run_command("bake_pages", "--sync")).group(1))
    manifest = json.loads((ctx.settings.PAGE_BAKE_DIR / "current" / "pages.json").read_text())
    assert baked > 100 and len(manifest["pages"]) == baked
    run = int(re.search(r"job run (\d+)", run_command("bake_pages")).group(1))
    committed(ctx, JobRun.objects.filter(pk=run, state="succeeded"), f"(JobRun {run})")


def case_serve_setup(ctx):
    """`serve_setup` runs make run's steps in one process: migrate, load the canonical
    content, publish the export set and the bake. Its "Published to …" and "Baked N
    pages …" mean the set and the pages are on disk."""
    ctx.settings.EXPORT_DIR = ctx.tmp_path / "exports"
    ctx.settings.PAGE_BAKE_DIR = ctx.tmp_path / "pages"
    ctx.settings.PAGE_CACHE_SECONDS = 600
    output = run_command("serve_setup")
    assert "Canonical content loaded." in output and "Published to" in output
    baked = int(re.search(r"Baked (\d+) pages", output).group(1))
    manifest = json.loads((ctx.settings.PAGE_BAKE_DIR / "current" / "pages.json").read_text())
    assert baked > 100 and len(manifest["pages"]) == baked
    exports = json.loads((ctx.settings.EXPORT_DIR / "current" / "manifest.json").read_text())
    assert exports["files"]


def case_rotate_signing_key(ctx):
    """`rotate_signing_key` appends a key rotation to the publication log, signed by the
    key in use, and writes the new key where the site reads it.

    Nothing acknowledged is lost: "Key rotation appended as entry N" means entry N is
    committed, naming the key the site now signs with.
    """
    from mica import signing
    from mica.content.models import PublicationLogEntry

    said = io.StringIO()
    call_command("rotate_signing_key", stdout=io.StringIO(), stderr=said)
    sequence = int(re.search(r"appended as entry (\d+)", said.getvalue()).group(1))
    rotation = PublicationLogEntry.objects.filter(
        sequence=sequence, kind="key-rotation", subject__new_key_id=signing.key_id()
    )
    committed(ctx, rotation, f"(publication log entry {sequence})")


RESTORED_TEXT = "Changed after the backup, to be undone by the restore."


def case_restore(ctx):
    """`restore BACKUP --no-input` brings back the database a `backup` copied.

    Nothing acknowledged is lost: "Restored the backup of …" means the restored rows
    are committed: a change made after the backup is gone.
    """
    from mica.methodology.models import GlossaryTerm

    term = the_first(GlossaryTerm, edition=ctx.edition())
    ctx.settings.EXPORT_DIR = ctx.tmp_path / "exports"
    if connection.vendor == "postgresql":
        output = run_command("backup", "--output", str(ctx.tmp_path))
        backup = re.search(r"Backup written to (\S+)", output).group(1)
        GlossaryTerm.objects.filter(pk=term.pk).update(definition_en=RESTORED_TEXT)
        assert "Restored the backup" in run_command("restore", backup, "--no-input")
        stored = ctx.observer.value(GlossaryTerm.objects.filter(pk=term.pk), "definition_en")
    else:
        stored = _restore_a_sqlite_copy(ctx, term)
    assert stored == term.definition_en, f"{RULE} the restored glossary term reads {stored!r}"


def _restore_a_sqlite_copy(ctx, term):
    """The in-memory test database cannot be backed up: restore a file copy of it, with
    the commands run as an operator runs them."""
    import os
    import sqlite3
    import subprocess
    import sys
    from contextlib import closing

    var = ctx.tmp_path / "var"
    var.mkdir()
    database = var / "mica.sqlite3"
    with closing(sqlite3.connect(database)) as copy:
        connection.connection.backup(copy)
    env = {key: value for key, value in os.environ.items() if not key.startswith("MICA_")}
    # The copy's pointers name builds in this process's build store.
    store = ctx.settings.STORAGES["builds"]["OPTIONS"]["location"]
    env.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        MICA_VAR_DIR=str(var),
        MICA_BUILD_STORE_DIR=str(store),
    )

    def manage(*arguments):
        done = subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=census.PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    backup = re.search(
        # Beside the copy's var/ (its backup key), never under it.
        r"Backup written to (\S+)",
        manage("backup", "--output", str(ctx.tmp_path / "backups")),
    ).group(1)
    table = term._meta.db_table
    with closing(sqlite3.connect(database)) as live, live:
        live.execute(
            f'UPDATE "{table}" SET definition_en = ? WHERE id = ?', (RESTORED_TEXT, term.pk)
        )
    assert "Restored the backup" in manage("restore", backup, "--no-input")
    with closing(sqlite3.connect(database)) as fresh:
        [(stored,)] = fresh.execute(
            f'SELECT definition_en FROM "{table}" WHERE id = ?', (term.pk,)
        ).fetchall()
    return stored


# --- Read-only entries: each says why, and the check that it is so ---------------------------


class ReadOnly:
    """A listed path that writes nothing (or is not offered), why, and how that is checked."""

    def __init__(self, reason, verify=None):
        self.reason, self.verify = reason, verify

    def __repr__(self):
        return f"ReadOnly({self.reason!r})"


def writes_nothing(prepare):
    """A check: what `prepare(ctx)` sets up and returns, done, leaves every table's
    committed row count as it was."""

    def verify(ctx):
        action = prepare(ctx)
        before = ctx.observer.fingerprint()
        action()
        after = ctx.observer.fingerprint()
        changed = {t: (before[t], after.get(t)) for t in before if before[t] != after.get(t)}
        assert not changed, f"a path listed as read-only wrote: {changed}"

    return verify


def posting(path_of, user="lead", allowed=(200, 302, 400, 403, 404, 405)):
    """Set up a POST to the path (signed in as the lead by default) with a CSRF token."""

    def prepare(ctx):
        browser = ctx.client(ctx.lead if user == "lead" else None)
        browser.get(reverse("admin:index" if user == "lead" else "admin:login"))  # a CSRF cookie
        token = browser.cookies["csrftoken"].value
        path = path_of(ctx) if callable(path_of) else path_of

        def action():
            response = browser.post(path, {"csrfmiddlewaretoken": token})
            assert response.status_code in allowed, (path, response.status_code)

        return action

    return prepare


def serving_with_inline_jobs(ctx):
    """`serve` where jobs run inline: it must refuse rather than serve (it would block)."""
    ctx.settings.JOBS_EAGER = True
    return running("serve")(ctx)


def running(*arguments):
    """Set up a run of a management command."""

    def prepare(ctx):
        from django.core.management import CommandError

        ctx.settings.EXPORT_DIR = ctx.tmp_path / "exports"
        resolved = [a(ctx) if callable(a) else a for a in arguments]

        def action():
            try:
                run_command(*resolved)
            except CommandError:
                pass  # refused (a backup of an in-memory database, say): still nothing written

        return action

    return prepare


def not_offered(permission, label):
    """A check: the admin offers a superuser no `permission` (add, change, delete) here."""

    def verify(ctx):
        from django.contrib import admin

        request = census.superuser_request()
        request.user = ctx.lead
        model_admin = admin.site._registry[_model(label)]
        assert not getattr(model_admin, f"has_{permission}_permission")(request), (
            f"the admin offers {permission} for {label}: list a case for it"
        )

    return verify


def change_form_edits_nothing(label, make=None):
    """A check: the change form shows every field of the model read-only."""

    def verify(ctx):
        from django.contrib import admin

        model = _model(label)
        request = census.superuser_request()
        request.user = ctx.lead
        if not admin.site._registry[model].has_change_permission(request):
            return
        pk = make(ctx) if make else the_first(model).pk
        data = admin_form(ctx.client(ctx.lead), admin_url(model, "change", pk), model)
        names = {f.name for f in model._meta.fields}
        assert not names & set(data), f"{label}'s change form edits {sorted(names & set(data))}"

    return verify


# --- The census ------------------------------------------------------------------------------

# Models whose admin deletes records (from the record's page and with "delete selected").
DELETABLE = [
    "auth.Group",
    "axes.AccessAttempt",
    "otp_totp.TOTPDevice",
    "auth.User",
    "site.ApiToken",
    "site.EnrolmentCode",
    "catalogue.LocalReview",
    "catalogue.TaskDefinition",
    "catalogue.TaskFamily",
    "catalogue.TaskVersion",
    "governance.Appeal",
    "governance.GateCell",
    "governance.PersonDeclaration",
    "jobs.BeatLease",
    "jobs.JobRun",
    "jobs.WorkerHeartbeat",
    "markets.IntegrationSituation",
    "markets.MarketCompetence",
    "markets.MarketEdition",
    "markets.PlatformRegistration",
    "methodology.LanguageCompetence",
    "methodology.Chapter",
    "methodology.ChapterItem",
    "methodology.ContractItem",
    "methodology.ContractSection",
    "methodology.Edition",
    "methodology.GlossaryTerm",
    "methodology.PolicyLine",
    "methodology.ReadingKind",
    "methodology.Reference",
    "methodology.ReferenceGroup",
    "submissions.Challenge",
    "submissions.OutboxMessage",
    "submissions.System",
    "submissions.SystemSubmission",
]

# Admins with no actions at all, "delete selected" included.
WITHOUT_ACTIONS = set()

ADD_NOT_OFFERED = {
    "axes.AccessAttempt": "failed sign-ins are counted by django-axes as they happen",
    "axes.AccessFailureLog": "failed sign-ins are logged by django-axes as they happen",
    "axes.AccessLog": "sign-ins are logged by django-axes as they happen",
    "governance.Appeal": "appeals are filed by the challenger, through the decision e-mail's link",
    "governance.GateCell": "gate cells are derived from the attempts by the gate",
    "jobs.JobRun": "job runs are recorded by the jobs they track",
    "jobs.WorkerHeartbeat": "heartbeats are written by the workers",
    "otp_totp.TOTPDevice": "a device is enrolled by its owner with an enrolment code",
    "jobs.BeatLease": "the beat lock is taken and renewed by beat",
    "submissions.Attempt": "attempts arrive through ingestion, where every rule is checked",
    "submissions.Challenge": "challenges are filed through the public form and the API",
    "submissions.OutboxMessage": "notifications are queued by the workflows that send them",
    "submissions.SystemSubmission": "operators submit through the public form and the API",
}

CHANGE_READ_ONLY = {
    "axes.AccessAttempt": ("a lockout is undone by deleting it (Unlock), never edited", None),
    "axes.AccessFailureLog": ("the failed sign-in log is append-only", None),
    "axes.AccessLog": ("the sign-in log is written by django-axes", None),
    "otp_totp.TOTPDevice": ("a device is enrolled by its owner, never edited", None),
    "site.ApiToken": ("a token is revoked by deleting it, never edited", None),
    "site.EnrolmentCode": ("a code is revoked by deleting it, never edited", None),
    "catalogue.ExposureEntry": ("the exposure log is append-only", None),
    "governance.GateCell": ("gate cells are derived from the attempts by the gate", None),
    "jobs.JobRun": ("a job run is written by its job", None),
    "jobs.WorkerHeartbeat": (
        "a heartbeat is written by its worker; the form shows it read-only",
        THROWAWAY["jobs.WorkerHeartbeat"],
    ),
    "jobs.BeatLease": (
        "the beat lock is written by beat; the form shows it read-only",
        THROWAWAY["jobs.BeatLease"],
    ),
    "submissions.Attempt": ("attempts are immutable once ingested", None),
    "submissions.OutboxMessage": (
        "the outbox is written by the mailer; the form shows it read-only",
        THROWAWAY["submissions.OutboxMessage"],
    ),
    "submissions.SystemSnapshot": (
        "a snapshot is immutable: a change is a new snapshot, never an edit",
        lambda ctx: (
            _model("submissions.SystemSnapshot")
            .objects.create(
                system=a_system(ctx),
                version="1.0",
                snapshot_date=TODAY,
                orchestrator="census",
                memory="None.",
                track="simulator",
                data_status="preview",
            )
            .pk
        ),
    ),
}

DECISIONS = {
    "catalogue.LocalReview": case_review_comment,
    "governance.Appeal": case_appeal_decision,
    "governance.DisclosureStatement": case_disclosure_change,
    "methodology.ChapterItem": case_claim_edit,
    "submissions.Challenge": case_challenge_decision,
    "submissions.SystemSubmission": case_system_submission_decision,
    "markets.PlatformOutage": case_outage_decision,
}

DELETE_NOT_OFFERED = {
    "axes.AccessFailureLog": "the failed sign-in log stays after an unlock",
    "axes.AccessLog": "the sign-in log stays",
    "catalogue.ExposureEntry": "the exposure log is append-only",
    "submissions.Attempt": "attempts are append-only: one is invalidated, never deleted",
    "markets.Market": "market identity facts stay; editions change",
    "submissions.SystemSnapshot": "a snapshot is immutable and referenced by its results",
    "governance.Withdrawal": "a withdrawn figure stays visible as withdrawn",
    "governance.DisclosureStatement": "the register keeps every statement, superseded ones too",
    "markets.PlatformOutage": "an outage record is the ground of the decisions on it: it stays",
}


# Models whose admin keeps a revision history with a revert (mica.history_admin).
HISTORY_ADMIN = [
    "catalogue.TaskDefinition",
    "catalogue.TaskFamily",
    "catalogue.TaskVersion",
    "governance.Withdrawal",
    "markets.IntegrationSituation",
    "markets.Market",
    "markets.MarketEdition",
    "markets.PlatformRegistration",
    "methodology.Chapter",
    "methodology.ChapterItem",
    "methodology.ContractItem",
    "methodology.ContractSection",
    "methodology.Edition",
    "methodology.GlossaryTerm",
    "methodology.PolicyLine",
    "methodology.ReadingKind",
    "methodology.Reference",
    "methodology.ReferenceGroup",
]


def _compare_page(label):
    def path(ctx):
        model = _model(label)
        spec = ADMIN_CHANGE.get(label)
        obj = spec.pick(ctx) if spec and spec.pick else first_changeable(ctx, model)
        meta = model._meta
        return reverse(f"admin:{meta.app_label}_{meta.model_name}_history_compare", args=[obj.pk])

    return path


def _admin_census():
    entries = {}
    for label in HISTORY_ADMIN:
        prefix = "admin:" + label.lower().replace(".", "_")
        entries[("admin-url", f"{prefix}_simple_history")] = revert_case(label)
        entries[("admin-url", f"{prefix}_history_compare")] = ReadOnly(
            "compares two revisions", writes_nothing(posting(_compare_page(label)))
        )
    for label in sorted(set(ADMIN_ADD) | set(ADD_NOT_OFFERED)):
        entries[("admin-add", label)] = (
            add_case(label)
            if label in ADMIN_ADD
            else ReadOnly(ADD_NOT_OFFERED[label], not_offered("add", label))
        )
    for label in sorted(set(ADMIN_CHANGE) | set(CHANGE_READ_ONLY) | set(DECISIONS)):
        if label in DECISIONS:
            entries[("admin-change", label)] = DECISIONS[label]
        elif label in ADMIN_CHANGE:
            entries[("admin-change", label)] = change_case(label)
        else:
            reason, make = CHANGE_READ_ONLY[label]
            entries[("admin-change", label)] = ReadOnly(
                reason, change_form_edits_nothing(label, make)
            )
    for label in DELETABLE:
        entries[("admin-delete", label)] = delete_case(label, "page")
        if label not in WITHOUT_ACTIONS:
            entries[("admin-action", f"{label}:delete_selected")] = delete_case(label, "action")
    for label, reason in DELETE_NOT_OFFERED.items():
        entries[("admin-delete", label)] = ReadOnly(reason, not_offered("delete", label))
    return entries


CENSUS = {
    # The disclosure register keeps a history to read; a change supersedes, never reverts.
    ("admin-url", "admin:governance_disclosurestatement_simple_history"): ReadOnly(
        "a statement is never reverted: a change is a new statement superseding it",
        writes_nothing(posting(_a_statement_revision)),
    ),
    ("admin-url", "admin:governance_disclosurestatement_history_compare"): ReadOnly(
        "compares two revisions",
        writes_nothing(posting(_compare_page("governance.DisclosureStatement"))),
    ),
    # Public forms.
    ("form", "submissions:system-new"): case_system_submission_form,
    ("form", "submissions:challenge-new"): case_challenge_form,
    ("form", "governance:challenge-appeal"): case_appeal_form,
    ("form", "governance:about-governance"): ReadOnly(
        "a permanent redirect to the governance page, whatever the method",
        writes_nothing(posting("/about/governance", user=None, allowed=(301,))),
    ),
    ("form", "sitemap"): ReadOnly(
        "Django's sitemap view answers every method with the sitemap",
        writes_nothing(posting("/sitemap.xml", user=None)),
    ),
    # The API.
    ("api", "POST /api/v1/system-submissions/"): case_system_submission_api,
    ("api", "POST /api/v1/challenges/"): case_challenge_api,
    ("api", "POST /api/v1/attempts/"): case_attempt_batch_api,
    ("api", "PATCH /api/v1/markets/{code}/situations/{situation_id}/"): case_situation_patch_api,
    # The admin: every model's add, change and delete, then actions and URLs.
    **_admin_census(),
    # What commits the portal to the holdout is written by publications and a task leaving
    # the holdout (catalogue.commitments), never in the admin, which shows it to keepers.
    **{
        (f"admin-{permission}", label): ReadOnly(
            "holdout commitments are written by the publication of an edition",
            not_offered(permission, label),
        )
        for label in ("catalogue.HoldoutSalt", "catalogue.HoldoutCommitment")
        for permission in ("add", "change", "delete")
    },
    ("admin-action", "catalogue.LocalReview:submit"): review_action_case(
        "submit", "draft", competent_author, "in-review"
    ),
    ("admin-action", "catalogue.LocalReview:request_changes"): case_request_changes,
    ("admin-action", "catalogue.LocalReview:approve"): review_action_case(
        "approve", "in-review", competent_reviewer, "approved"
    ),
    ("admin-action", "catalogue.LocalReview:resubmit"): review_action_case(
        "resubmit", "voided", competent_author, "in-review"
    ),
    ("admin-action", "catalogue.TaskDefinition:promote"): case_promote,
    ("admin-action", "catalogue.TaskDefinition:retire"): case_retire,
    ("admin-action", "catalogue.TaskVersion:promote_task"): case_promote_task_on_a_version,
    ("admin-action", "catalogue.TaskVersion:make_current"): case_make_current,
    ("admin-url", "admin:catalogue_taskversion_start_next"): case_start_next_version,
    ("admin-action", "submissions.Attempt:invalidate"): case_invalidate_attempt,
    ("admin-action", "submissions.Attempt:reverse_invalidation"): case_reverse_invalidation,
    ("admin-action", "markets.PlatformRegistration:pre_register"): case_pre_register,
    ("admin-action", "markets.PlatformRegistration:start_replacement"): case_start_replacement,
    ("admin-action", "methodology.ChapterItem:approve_korean"): case_approve_korean,
    ("admin-action", "methodology.Edition:start_draft"): case_start_draft,
    ("admin-action", "methodology.Edition:publish"): case_publish,
    ("admin-url", "admin:jobs_jobrun_start"): case_start_jobs,
    ("form", "second-factor"): case_second_factor,
    ("form", "second-factor-enrol"): case_second_factor_enrol,
    ("admin-add", "site.ApiToken"): case_api_token_issue,
    ("admin-add", "site.EnrolmentCode"): case_enrolment_code_issue,
    ("command", "issue_enrolment_code"): case_issue_enrolment_code,
    ("admin-action", "axes.AccessAttempt:unlock"): case_unlock_sign_in,
    ("admin-url", "admin:otp_totp_totpdevice_config"): ReadOnly(
        "a device's secret is never shown again (OTP_ADMIN_HIDE_SENSITIVE_DATA)",
        writes_nothing(posting(_a_device_url("otp_totp_totpdevice_config"))),
    ),
    ("admin-url", "admin:otp_totp_totpdevice_qrcode"): ReadOnly(
        "a device's secret is never shown again (OTP_ADMIN_HIDE_SENSITIVE_DATA)",
        writes_nothing(posting(_a_device_url("otp_totp_totpdevice_qrcode"))),
    ),
    ("admin-url", "admin:login"): case_admin_login,
    ("admin-url", "admin:logout"): case_admin_logout,
    ("admin-url", "admin:password_change"): case_own_password_change,
    ("admin-url", "admin:auth_user_password_change"): case_set_password,
    ("admin-url", "admin:index"): ReadOnly(
        "the admin's index page", writes_nothing(posting("/admin/"))
    ),
    ("admin-url", "admin:app_list"): ReadOnly(
        "one app's page of the admin", writes_nothing(posting("/admin/auth/"))
    ),
    ("admin-url", "admin:jsi18n"): ReadOnly(
        "the admin's translation catalogue", writes_nothing(posting("/admin/jsi18n/"))
    ),
    ("admin-url", "admin:autocomplete"): ReadOnly(
        "autocomplete answers GET only", writes_nothing(posting("/admin/autocomplete/"))
    ),
    ("admin-url", "admin:view_on_site"): ReadOnly(
        "redirects to a record's public page",
        writes_nothing(
            posting(
                lambda ctx: reverse(
                    "admin:view_on_site",
                    args=[ContentType.objects.get_for_model(User).pk, ctx.lead.pk],
                )
            )
        ),
    ),
    ("admin-url", "admin:password_change_done"): ReadOnly(
        "a confirmation page", writes_nothing(posting("/admin/password_change/done/"))
    ),
    ("admin-url", "admin:catalogue_taskversion_translation_status"): ReadOnly(
        "the translation status matrix",
        writes_nothing(posting("/admin/catalogue/taskversion/translation-status/")),
    ),
    # Management commands of the project.
    ("command", "load_canonical_content"): case_load_canonical_content,
    ("command", "ingest_attempts"): case_ingest_attempts,
    ("command", "load_demo_runs"): case_load_demo_runs,
    ("command", "rerun_gate"): case_rerun_gate,
    ("command", "regenerate_exports"): case_regenerate_exports,
    ("command", "bake_pages"): case_bake_pages,
    ("command", "serve_setup"): case_serve_setup,
    ("command", "restore"): case_restore,
    ("command", "rotate_signing_key"): case_rotate_signing_key,
    ("command", "backup"): ReadOnly(
        "writes a copy of the database and the exports to files only",
        writes_nothing(running("backup", "--output", lambda ctx: str(ctx.tmp_path))),
    ),
    ("command", "dump_canonical_content"): ReadOnly(
        "writes the canonical records to YAML files only",
        writes_nothing(
            running("dump_canonical_content", "--output", lambda ctx: str(ctx.tmp_path))
        ),
    ),
    ("command", "serve"): ReadOnly(
        "starts gunicorn and a Celery worker with beat, whose writes are the pages' and the "
        "jobs' own, each listed here (tests/browser/test_embedded_jobs.py runs it); where "
        "jobs would run inline it refuses to start",
        writes_nothing(serving_with_inline_jobs),
    ),
    ("command", "flush"): ReadOnly(
        "Django's flush (submissions' own, letting the append-only triggers stand aside):"
        " it empties every table on purpose, the test suite's reset and never a user's"
        " write; it asks first, and answered no it writes nothing",
        writes_nothing(flush_declined),
    ),
    ("command", "export_methodology"): ReadOnly(
        "prints the Markdown pack",
        writes_nothing(running("export_methodology", "--lang", "en")),
    ),
}

WRITE_CASES = sorted(key for key, case in CENSUS.items() if not isinstance(case, ReadOnly))
READ_ONLY = sorted(key for key, case in CENSUS.items() if isinstance(case, ReadOnly))


def _entry_id(entry):
    return f"{entry[0]}:{entry[1]}"


# --- The tests ---------------------------------------------------------------------------------


def test_the_census_lists_every_write_path():
    """A new write path without a census entry fails here, named; so does an entry whose
    path is gone. Discovery rules: tests/census.py."""
    discovered = census.discovered_write_paths()
    listed = set(CENSUS)
    unlisted = sorted(discovered - listed)
    gone_paths = sorted(listed - discovered)
    assert not unlisted, (
        "write paths without a census entry (add a case, or ReadOnly with the reason): "
        + ", ".join(map(_entry_id, unlisted))
    )
    assert not gone_paths, "census entries whose path no longer exists: " + ", ".join(
        map(_entry_id, gone_paths)
    )


@pytest.fixture(scope="module")
def world_signing_key(tmp_path_factory):
    """The world signs its publications with a key of its own (mica.signing), so the
    rotation case rotates it for every later case, as it does for a deployment, and never
    the key under var/."""
    from django.conf import settings

    kept = settings.SIGNING_KEY_FILE
    settings.SIGNING_KEY_FILE = tmp_path_factory.mktemp("census-key") / "signing_key"
    yield settings.SIGNING_KEY_FILE
    settings.SIGNING_KEY_FILE = kept


@pytest.fixture
def ctx(db, world, world_signing_key, settings, tmp_path, mailoutbox, eager_celery):
    context = Context(world, settings, tmp_path, mailoutbox)
    try:
        yield context
    finally:
        for cleanup in reversed(context.cleanups):
            cleanup()
        assert not census.transaction_left_open(connection), (
            "the case left a transaction open: what it acknowledged is not committed"
        )


@pytest.mark.parametrize("entry", WRITE_CASES, ids=_entry_id)
def test_every_write_path_stores_what_it_acknowledges(ctx, entry):
    """Nothing acknowledged is lost: after each success answer the row is committed (seen
    from a fresh connection) with its audit record where the model has one."""
    CENSUS[entry](ctx)


@pytest.mark.parametrize("entry", READ_ONLY, ids=_entry_id)
def test_every_read_only_entry_writes_nothing(ctx, entry):
    """A path listed as read-only, or as not offered, is so."""
    CENSUS[entry].verify(ctx)
