"""The disclosure register, decision rights and the governance page."""

import datetime

import pytest
from django.core.management import call_command

from governance.models import DisclosureStatement
from governance.selectors import disclosure_current, disclosure_history, is_stale
from governance.services import disclosure_supersede
from tests.support import fields_missing_korean

pytestmark = pytest.mark.django_db


def test_a_change_supersedes_and_keeps_history(client, canonical_content):
    before = DisclosureStatement.objects.count()
    first = disclosure_current().first()
    new = disclosure_supersede(
        key=first.key,
        changes={"statement_en": "Now disclosed.", "statement_ko": "이제 공개합니다."},
    )
    assert new.supersedes == first and DisclosureStatement.objects.count() == before + 1
    assert list(disclosure_history()) == [DisclosureStatement.objects.get(pk=first.pk)]
    page = client.get("/governance/").text
    assert "Now disclosed." in page and first.statement_en[:40] in page
    api = client.get("/api/v1/disclosures/").json()
    assert sum(1 for d in api if d["key"] == first.key) == 2


def test_reloading_unchanged_content_adds_no_revision(canonical_content):
    before = DisclosureStatement.objects.count()
    call_command("load_canonical_content", "governance", stdout=open("/dev/null", "w"))
    assert DisclosureStatement.objects.count() == before


def test_stale_flags_follow_the_confirmation_date(client, canonical_content):
    statement = disclosure_current().first()
    today = statement.confirmed_on
    assert not is_stale(statement, today=today)
    late = today + datetime.timedelta(days=statement.confirm_every_days + 1)
    assert is_stale(statement, today=late)
    DisclosureStatement.objects.filter(pk=statement.pk).update(
        confirmed_on=datetime.date(2020, 1, 1)
    )
    assert "Stale: not confirmed within its period." in client.get("/governance/").text


def test_governance_page_and_apis_in_both_languages(client, canonical_content):
    english = client.get("/governance/").text
    korean = client.get("/ko/governance/").text
    assert "Decision rights" in english and "Independently held" in english
    assert 'lang="ko"' in korean
    rights = client.get("/api/v1/decision-rights/").json()
    assert rights and all(r["right_ko"] for r in rights)
    assert all(r["independently_held"] is False for r in rights)
    assert client.get("/api/v1/corrections/").json() == []


def test_every_governance_text_has_korean(canonical_content):
    missing = fields_missing_korean("governance")
    assert not missing, missing[:10]


@pytest.mark.vendor
def test_a_bad_amount_band_is_refused_by_the_database(canonical_content):
    from django.db import IntegrityError

    statement = disclosure_current().first()
    with pytest.raises(IntegrityError):
        DisclosureStatement.objects.filter(pk=statement.pk).update(amount_min=10, amount_max=1)


def test_the_register_follows_its_order_of_categories(canonical_content):
    categories = [s.category for s in disclosure_current()]
    assert categories[0] == "operator"
    assert categories == sorted(
        categories,
        key=lambda c: [
            "operator",
            "decision-rights",
            "funding",
            "paid-task-authors",
            "vendor-relationships",
            "conflicts-of-interest",
            "publication-process",
            "corrections-and-appeals",
        ].index(c),
    )
