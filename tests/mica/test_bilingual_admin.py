"""English and Korean side by side in every content admin, and the English change since
the Korean approval marked.

Issue 19: "Korean and English side by side on one screen for every translated field,
with the English source's change since the Korean approval highlighted."
"""

import re

import pytest
from django.db import transaction

from markets.models import Market
from mica.methodology.models import ChapterItem
from mica.methodology.services import claim_korean_approve
from tests.factories import LeadFactory, grant_language

pytestmark = pytest.mark.django_db

CHANGED = "The English changed after the Korean was approved"


@pytest.fixture
def lead(client, canonical_content):
    person = LeadFactory()
    # Approving a Korean text is a review: it takes a Korean competence, verified by another.
    grant_language(person, "ko", verified_by=LeadFactory(username="korean-verifier"))
    client.force_login(person)
    return person


def save(record):
    with transaction.atomic():
        record.save()


def test_a_claims_english_change_since_its_korean_approval_is_marked(client, lead):
    item = ChapterItem.objects.filter(item_type="claim", edition__status="draft").first()
    url = f"/admin/methodology/chapteritem/{item.pk}/change/"
    claim_korean_approve(item=item, actor=lead)
    page = client.get(url)
    assert "field-detail_en field-detail_ko" in page.text  # one line, side by side
    assert CHANGED not in page.text
    item.detail_en = item.detail_en + " Reworded after approval."
    save(item)
    page = client.get(url)
    assert CHANGED in page.text and re.search(r"<ins>\s*Reworded after approval\.</ins>", page.text)
    korean = client.get("/ko" + url)
    assert "한국어 승인" in korean.text


def test_without_an_approval_the_last_korean_edit_stands_for_it(client, lead):
    """A record with no approval of its own: whoever last wrote the Korean wrote it
    against the English of that moment."""
    market = Market.objects.get(code="KR")
    url = f"/admin/markets/market/{market.pk}/change/"
    fields = [f for f in ("name", "summary", "label") if hasattr(market, f"{f}_en")]
    field = fields[0]
    setattr(market, f"{field}_ko", getattr(market, f"{field}_ko") + " (개정)")
    save(market)
    assert CHANGED not in client.get(url).text
    setattr(market, f"{field}_en", getattr(market, f"{field}_en") + " revised")
    save(market)
    page = client.get(url)
    assert CHANGED in page.text and re.search(r"<ins>\s*revised</ins>", page.text)
