"""A published edition's market editions are frozen with it (issue 41, item 1).

Issue 41: "A published edition's records (thresholds, claims and corrections as
published, the market editions it froze, and the task versions its catalogue holds) are
read-only the same way", through the admin, the ORM and raw SQL on both databases.
Seed 000: "The method is versioned by edition". The publication page tells the method
lead that publishing freezes the market editions; each path a writer can take is tried
after a real publication.
"""

import re

import pytest
from django.db import DatabaseError, connection, transaction

from markets.models import Hazard, Market, MarketEdition
from mica.errors import ValidationFailed
from mica.methodology.models import Edition
from mica.methodology.services import edition_draft_start_or_open, edition_publish
from tests.factories import LeadFactory

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

NOTE = "A note typed after the edition was published"


@pytest.fixture
def lead(canonical_content):
    return LeadFactory()


@pytest.fixture
def published(lead):
    """The canonical edition, published: its market editions as published."""
    edition = Edition.objects.get()
    edition_publish(edition_id=edition.pk, actor=lead)
    return MarketEdition.objects.select_related("edition").get(edition=edition, market__code="KR")


def _a_market_of_no_edition():
    """ZZ, a user-assigned code: a market no edition declares."""
    return Market.objects.create(
        code="ZZ",
        name="Elsewhere",
        native_name="Elsewhere",
        native_lang="en",
        locale="en-ZZ",
        currency_code="ZZZ",
        currency_symbol="Z",
        timezone="UTC",
        display_order=99,
    )


def _raw(sql, *params):
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def test_the_admin_shows_a_published_market_edition_read_only(client, lead, published):
    url = f"/admin/markets/marketedition/{published.pk}/change/"
    client.force_login(lead)
    page = client.get(url)
    assert page.status_code == 200
    # The page shows what was published; no form field offers to change it.
    assert 'name="edition_note_en"' not in page.text
    assert published.edition_note_en.split("\n")[0][:40] in page.text
    data = {"edition_note_en": NOTE, "profile_summary_en": NOTE}
    assert client.post(url, data).status_code == 403
    assert MarketEdition.objects.get(pk=published.pk).edition_note_en == published.edition_note_en


def test_the_orm_refuses_a_change_an_addition_and_a_removal(published):
    published.edition_note_en = NOTE
    with pytest.raises(ValidationFailed, match="published edition"):
        published.save()
    hazard = Hazard.objects.filter(market_edition=published).first()
    assert hazard is not None
    hazard.title_en = NOTE
    with pytest.raises(ValidationFailed):
        hazard.save()
    with pytest.raises(ValidationFailed):
        Hazard(market_edition=published, title_en=NOTE, detail_en=NOTE).save()
    # Django deletes inside a block of its own without a savepoint: the refusal ends the
    # surrounding transaction, as a request's would.
    with pytest.raises(ValidationFailed), transaction.atomic():
        hazard.delete()
    assert Hazard.objects.get(pk=hazard.pk).title_en != NOTE


def test_raw_sql_is_refused_by_the_database(published):
    """No session of the application's role gets round the triggers."""
    _raw("UPDATE markets_marketedition SET edition_note_en = %s WHERE id = %s", NOTE, published.pk)
    _raw("DELETE FROM markets_hazard WHERE market_edition_id = %s", published.pk)
    _raw(
        "UPDATE markets_datasheet SET motivation_en = %s WHERE market_edition_id = %s",
        NOTE,
        published.pk,
    )
    # A market edition added to the published edition, for a market it did not declare.
    market = _a_market_of_no_edition()
    _raw(
        "INSERT INTO markets_marketedition (market_id, edition_id, edition_note, "
        "edition_note_en, profile_summary, profile_summary_en) VALUES (%s, %s, %s, %s, %s, %s)",
        market.pk,
        published.edition_id,
        NOTE,
        NOTE,
        NOTE,
        NOTE,
    )
    stored = MarketEdition.objects.get(pk=published.pk)
    assert stored.edition_note_en == published.edition_note_en
    assert Hazard.objects.filter(market_edition=published).exists()


def test_a_new_draft_carries_copies_that_stay_editable(lead, published):
    """A change goes into a new edition: its draft's market editions are copies, open to
    editing, while the published ones stay as they were."""
    draft, _started = edition_draft_start_or_open(source=published.edition)
    copy = MarketEdition.objects.get(edition=draft, market=published.market)
    copy.edition_note_en = NOTE
    copy.save()
    Hazard.objects.filter(market_edition=copy).first().delete()
    assert MarketEdition.objects.get(pk=copy.pk).edition_note_en == NOTE
    assert MarketEdition.objects.get(pk=published.pk).edition_note_en != NOTE
    assert (
        Hazard.objects.filter(market_edition=published).count()
        > Hazard.objects.filter(market_edition=copy).count()
    )


def test_the_admin_add_form_refuses_a_published_edition_as_a_form_error(client, lead, published):
    """An author choosing the published edition meets a sentence on the form, not a 500,
    and nothing is stored; the drafts are what the form offers."""
    market = _a_market_of_no_edition()
    client.force_login(lead)
    form = client.get("/admin/markets/marketedition/add/")
    choices = re.search(r'<select name="edition".*?</select>', form.text, re.S).group(0)
    assert f'value="{published.edition_id}"' not in choices
    data = {
        "market": market.pk,
        "edition": published.edition_id,
        "edition_note_en": NOTE,
        "edition_note_ko": NOTE,
        "profile_summary_en": NOTE,
        "profile_summary_ko": NOTE,
    }
    for prefix in ("hazards", "local_changes", "datasheet", "data_statement"):
        data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    answer = client.post("/admin/markets/marketedition/add/", data)
    assert answer.status_code == 200
    assert "errorlist" in answer.text
    assert not MarketEdition.objects.filter(market=market).exists()


def test_the_admin_offers_no_delete_of_a_published_market_edition(client, lead, published):
    client.force_login(lead)
    url = f"/admin/markets/marketedition/{published.pk}/delete/"
    assert client.post(url, {"post": "yes"}).status_code == 403
    answer = client.post(
        "/admin/markets/marketedition/",
        {"action": "delete_selected", "_selected_action": [published.pk], "post": "yes"},
    )
    assert answer.status_code in (200, 302, 403)
    assert MarketEdition.objects.filter(pk=published.pk).exists()
