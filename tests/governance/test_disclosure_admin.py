"""The disclosure register in the admin: a change is a new statement superseding the old,
which stays public, whole, in the history of the governance page and in the API."""

import datetime
from decimal import Decimal
from html import escape

import pytest

from governance.models import DisclosureStatement
from governance.selectors import disclosure_current
from governance.services import disclosure_supersede
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db

CHANGE = "/admin/governance/disclosurestatement/{pk}/change/"


@pytest.fixture
def editor(client, canonical_content):
    """Staff who keep the register (the governance permissions), signed in."""
    person = StaffFactory(username="register-keeper", app_permissions=("governance",))
    client.force_login(person)
    return person


@pytest.fixture
def funding():
    return disclosure_current().get(key="funding")


def form_of(statement, **changes):
    """The change form as the admin posts it: every field the editor sees, as it stands."""
    values = {
        "category": statement.category,
        "title_en": statement.title_en,
        "title_ko": statement.title_ko,
        "statement_en": statement.statement_en,
        "statement_ko": statement.statement_ko,
        "basis": statement.basis,
        "confirmed_on": statement.confirmed_on.isoformat(),
        "confirm_every_days": statement.confirm_every_days,
        "amount_min": "" if statement.amount_min is None else statement.amount_min,
        "amount_max": "" if statement.amount_max is None else statement.amount_max,
        "amount_currency": statement.amount_currency,
        "amount_period": statement.amount_period,
        "_save": "Save",
    }
    values.update(changes)
    return values


def change_in_admin(client, statement, **changes):
    return client.post(CHANGE.format(pk=statement.pk), form_of(statement, **changes))


def test_a_change_in_the_admin_writes_a_new_statement_and_keeps_the_old_one(
    client, editor, funding, django_capture_on_commit_callbacks
):
    """Seed 000: "What must be disclosed. … funding and its terms"; the register's rule
    (governance.models.DisclosureStatement): "A change is a new statement that supersedes
    this one; the old one stays public as history." Saving the admin's change form goes
    through that service: one new row, the old one superseded and untouched, and the
    editor recorded as the author of the revision."""
    before = DisclosureStatement.objects.count()
    old_text = funding.statement_en
    with django_capture_on_commit_callbacks(execute=True):
        response = change_in_admin(
            client,
            funding,
            statement_en="Funding: a grant of the foundation, renewed yearly.",
            amount_min="10000",
            amount_max="50000",
            amount_currency="USD",
            amount_period="year",
        )
    assert response.status_code == 302, response.content[:2000]
    assert DisclosureStatement.objects.count() == before + 1
    old = DisclosureStatement.objects.get(pk=funding.pk)
    new = disclosure_current().get(key="funding")
    assert old.superseded_at is not None and old.statement_en == old_text
    assert old.amount_min is None
    assert new.supersedes_id == old.pk and new.pk != old.pk
    assert new.statement_en == "Funding: a grant of the foundation, renewed yearly."
    assert new.statement_ko == funding.statement_ko  # the other language carried over
    assert (new.amount_min, new.amount_max) == (Decimal("10000"), Decimal("50000"))
    assert new.history.latest().history_user == editor


def test_an_unchanged_form_writes_nothing(client, editor, funding):
    before = DisclosureStatement.objects.count()
    assert change_in_admin(client, funding).status_code == 302
    assert DisclosureStatement.objects.count() == before
    assert disclosure_current().get(key="funding").pk == funding.pk


def test_a_superseded_statement_is_never_changed_or_deleted(client, editor, funding):
    disclosure_supersede(key="funding", changes={"statement_en": "Changed."})
    old = DisclosureStatement.objects.get(pk=funding.pk)
    page = client.get(CHANGE.format(pk=old.pk))
    assert page.status_code == 200 and 'name="_save"' not in page.text
    # A form opened before the change and saved after it: refused, nothing written, and
    # the editor is sent to the statement now current.
    before = DisclosureStatement.objects.count()
    stale = change_in_admin(client, funding, statement_en="Lost update.")
    current = disclosure_current().get(key="funding")
    assert stale.status_code == 302 and stale["Location"] == CHANGE.format(pk=current.pk)
    assert DisclosureStatement.objects.count() == before
    assert not DisclosureStatement.objects.filter(statement_en="Lost update.").exists()
    deleted = client.post(
        f"/admin/governance/disclosurestatement/{old.pk}/delete/", {"post": "yes"}
    )
    assert deleted.status_code == 403
    assert DisclosureStatement.objects.filter(pk=old.pk).exists()


@pytest.mark.parametrize(
    "prefix, message",
    [
        ("", "An amount band needs both its lower and its upper bound."),
        ("/ko", "금액 구간에는 하한과 상한이 모두 있어야 합니다."),
    ],
)
def test_half_an_amount_band_is_refused_in_the_editors_language(
    client, editor, funding, prefix, message
):
    before = DisclosureStatement.objects.count()
    response = client.post(
        prefix + CHANGE.format(pk=funding.pk), form_of(funding, amount_min="100")
    )
    assert response.status_code == 200 and message in response.text
    assert DisclosureStatement.objects.count() == before


def test_a_new_key_is_added_and_a_taken_key_refused(client, editor, funding):
    values = form_of(
        funding,
        key="advisory-board",
        category="decision-rights",
        title_en="Advisory board",
        title_ko="자문 위원회",
        statement_en="No advisory board exists.",
        statement_ko="자문 위원회는 없습니다.",
    )
    assert client.post("/admin/governance/disclosurestatement/add/", values).status_code == 302
    assert disclosure_current().filter(key="advisory-board").exists()
    before = DisclosureStatement.objects.count()
    taken = client.post("/admin/governance/disclosurestatement/add/", {**values, "key": "funding"})
    assert taken.status_code == 200 and "This key is taken." in taken.text
    assert DisclosureStatement.objects.count() == before


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_the_public_history_shows_the_whole_superseded_entry(client, canonical_content, prefix):
    """The history keeps the entry as it was published: its statement, its amount band,
    its basis and confirmation date, not the title and text alone."""
    disclosure_supersede(
        key="funding",
        changes={
            "amount_min": Decimal("1000"),
            "amount_max": Decimal("5000"),
            "amount_currency": "USD",
            "amount_period": "year",
            "confirmed_on": datetime.date(2026, 11, 2),
        },
    )
    old = disclosure_supersede(
        key="funding",
        changes={"statement_en": "Now fully disclosed.", "amount_min": None, "amount_max": None},
    ).supersedes
    page = client.get(f"{prefix}/governance/").text
    start = page.index(f'id="statement-{old.pk}"')
    entry = page[start : page.index("</li>", start)]
    assert "USD 1000–5000 / year" in entry
    assert "2026-11-02" in entry
    assert escape(getattr(old, f"statement_{prefix.strip('/') or 'en'}")[:30]) in entry


def test_the_api_links_each_statement_to_its_predecessor_by_id(client, canonical_content):
    first = disclosure_current().get(key="funding")
    second = disclosure_supersede(key="funding", changes={"statement_en": "Second."})
    third = disclosure_supersede(key="funding", changes={"statement_en": "Third."})
    rows = {row["id"]: row for row in client.get("/api/v1/disclosures/").json()}
    assert rows[third.pk]["supersedes"] == second.pk and rows[third.pk]["superseded_by"] is None
    assert rows[second.pk]["supersedes"] == first.pk
    assert rows[second.pk]["superseded_by"] == third.pk
    assert rows[first.pk]["superseded_by"] == second.pk
    listed = list(rows)
    assert listed.index(third.pk) < listed.index(second.pk), "current statements first"


def test_the_disclosure_api_runs_a_constant_number_of_queries(
    client, canonical_content, django_assert_num_queries
):
    with django_assert_num_queries(1) as before:
        client.get("/api/v1/disclosures/")
    for n in range(3):
        disclosure_supersede(key="funding", changes={"statement_en": f"Revision {n}."})
    with django_assert_num_queries(len(before.captured_queries)):
        client.get("/api/v1/disclosures/")


def test_the_service_refuses_half_a_band_and_writes_nothing(canonical_content, funding):
    """Nothing half-written: the old statement stays current when the new one is refused."""
    from mica.errors import ValidationFailed

    before = DisclosureStatement.objects.count()
    with pytest.raises(ValidationFailed) as refused:
        disclosure_supersede(key="funding", changes={"amount_min": Decimal("5")})
    assert "amount_max" in refused.value.field_errors
    assert DisclosureStatement.objects.count() == before
    assert disclosure_current().get(key="funding").pk == funding.pk
