"""Section ids, placeholders and references are checked where editors type them."""

import pytest

from mica.methodology.models import Chapter, ChapterItem, Edition, GlossaryTerm
from mica.methodology.services import section_record_errors
from tests.factories import LeadFactory
from tests.support import fields_missing_korean

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(client, canonical_content):
    user = LeadFactory(username="editor")
    client.force_login(user)
    return user


def item_form(item, **changes):
    data = {
        "edition": item.edition_id,
        "chapter": item.chapter_id,
        "section_id": item.section_id,
        "position": item.position,
        "item_type": item.item_type,
        "kind": item.kind,
        "state": item.state,
        "term_en": item.term_en,
        "term_ko": item.term_ko,
        "detail_en": item.detail_en,
        "detail_ko": item.detail_ko,
        "reference_keys": __import__("json").dumps(item.reference_keys),
        "link": item.link,
        "link_label_en": item.link_label_en or "",
        "link_label_ko": item.link_label_ko or "",
    }
    data.update(changes)
    return data


def claim():
    return ChapterItem.objects.filter(item_type="claim").exclude(reference_keys=[]).first()


def test_every_translated_field_has_korean(canonical_content):
    missing = fields_missing_korean("methodology")
    assert not missing, missing[:10]


def test_section_ids_are_unique_across_every_kind(canonical_content):
    term = GlossaryTerm.objects.first()
    term.section_id = Chapter.objects.first().section_id
    assert "section_id" in section_record_errors(term)


def test_a_section_id_never_changes_once_published(canonical_content):
    item = claim()
    Edition.objects.update(status="published")
    item.refresh_from_db()
    item.section_id = "renamed-claim"
    assert "never changes" in section_record_errors(item)["section_id"][0]


def test_renumbering_keeps_the_section_id(client, canonical_content):
    chapter = Chapter.objects.get(section_id="why-mica")
    chapter.number = 7
    chapter.save()
    page = client.get("/methodology/").text
    assert '<h2 id="why-mica"><span class="chapter-number">7</span> ' in page
    assert client.get("/methodology/claims/why-mica/").status_code == 200


def test_admin_refuses_a_placeholder_typo_in_the_editors_language(client, editor):
    item = claim()
    response = client.post(
        f"/ko/admin/methodology/chapteritem/{item.pk}/change/",
        item_form(item, detail_en="We cover {{market_cout}} markets."),
    )
    assert response.status_code == 200
    assert "알 수 없는 자리표시자" in response.text and "market_cout" in response.text
    item.refresh_from_db()
    assert "market_cout" not in item.detail_en


def test_admin_refuses_a_duplicate_section_id(client, editor):
    item = claim()
    other = ChapterItem.objects.exclude(pk=item.pk).first()
    response = client.post(
        f"/admin/methodology/chapteritem/{item.pk}/change/",
        item_form(item, section_id=other.section_id),
    )
    assert response.status_code == 200
    assert "is already used in this edition" in response.text


def test_admin_refuses_a_missing_reference_key(client, editor):
    item = claim()
    response = client.post(
        f"/ko/admin/methodology/chapteritem/{item.pk}/change/",
        item_form(item, reference_keys='["no-such-paper"]'),
    )
    assert response.status_code == 200
    assert "no-such-paper" in response.text and "레퍼런스" in response.text


def test_admin_saves_a_sound_change(client, editor):
    item = claim()
    response = client.post(
        f"/admin/methodology/chapteritem/{item.pk}/change/",
        item_form(item, detail_en=item.detail_en + " Across {{market_count}}."),
    )
    assert response.status_code == 302
    assert "{{market_count}}" in ChapterItem.objects.get(pk=item.pk).detail_en


def test_published_records_are_read_only_in_the_admin(client, editor):
    item = claim()
    Edition.objects.update(status="published")
    client.post(
        f"/admin/methodology/chapteritem/{item.pk}/change/",
        item_form(item, detail_en="Changed after publication."),
    )
    item.refresh_from_db()
    assert item.detail_en != "Changed after publication."
