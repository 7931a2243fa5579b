"""Editions: a draft copy, publishing with its refusals, immutability, archive and diff."""

import pytest

from mica.errors import ValidationFailed
from mica.methodology.models import ChapterItem, Edition
from mica.methodology.services import claim_korean_approve, edition_publish, edition_start_draft
from tests.factories import LeadFactory, StaffFactory, grant_language

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead(canonical_content):
    """The method lead, who also reviews Korean (a competence another person verified)."""
    lead = LeadFactory()
    grant_language(lead, "ko", verified_by=StaffFactory(username="language-verifier"))
    return lead


@pytest.fixture
def pair(lead):
    """Preview 0.1 published, and a draft 0.2 with one claim changed, added and retracted."""
    older = Edition.objects.get(slug="preview-0.1")
    edition_publish(edition_id=older.pk, actor=lead)
    older.refresh_from_db()  # as published: its frozen catalogue and status
    newer = edition_start_draft(
        source=older, slug="preview-0.2", label_en="Preview 0.2", label_ko="프리뷰 0.2"
    )
    claims = ChapterItem.objects.filter(edition=newer, item_type="claim").order_by("pk")
    changed = claims[0]
    changed.detail_en = changed.detail_en + " Narrowed."
    changed.save()
    retracted = claims[1].section_id
    claims[1].delete()
    added = ChapterItem.objects.get(pk=claims[2].pk)
    added.pk, added.section_id = None, "a-new-claim"
    added.save()
    return older, newer, changed.section_id, retracted


def test_the_draft_copies_every_record(pair):
    from markets.models import IntegrationSituation, MarketEdition, RepresentativePlatform

    older, newer, _changed, _retracted = pair
    assert (
        ChapterItem.objects.filter(edition=newer).count()
        == ChapterItem.objects.filter(edition=older).count()
    )
    for model, path in [
        (MarketEdition, "edition"),
        (IntegrationSituation, "market_edition__edition"),
        (RepresentativePlatform, "registration__market_edition__edition"),
    ]:
        copied = model.objects.filter(**{path: newer}).count()
        assert copied == model.objects.filter(**{path: older}).count() > 0, model
    draft_kr = MarketEdition.objects.get(edition=newer, market__code="KR")
    assert (
        draft_kr.datasheet.pk
        != MarketEdition.objects.get(edition=older, market__code="KR").datasheet.pk
    )


def test_a_published_edition_refuses_every_save(pair, client, lead):
    older, _newer, _changed, _retracted = pair
    record = ChapterItem.objects.filter(edition=older).first()
    client.force_login(lead)
    client.post(f"/admin/methodology/chapteritem/{record.pk}/change/", {"detail_en": "x"})
    assert ChapterItem.objects.get(pk=record.pk).detail_en != "x"
    record.detail_en = "Rewritten after publication."
    with pytest.raises(ValidationFailed):
        record.save()
    older.version_label_en = "Renamed"
    with pytest.raises(ValidationFailed):
        older.save()
    # Last: a refused delete leaves the surrounding transaction unusable.
    with pytest.raises(ValidationFailed):
        record.delete()


def test_a_published_edition_refuses_api_writes(pair, client, lead):
    from markets.models import IntegrationSituation

    older, _newer, _changed, _retracted = pair
    situation = IntegrationSituation.objects.filter(
        market_edition__edition=older, market_edition__market__code="KR"
    ).first()
    client.force_login(lead)
    response = client.patch(
        f"/api/v1/markets/kr/situations/{situation.situation_id}/",
        {"title_en": "Rewritten after publication"},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "published and cannot change" in response.json()["detail"]
    situation.refresh_from_db()
    assert situation.title_en != "Rewritten after publication"


def test_the_diff_on_a_constructed_pair(pair, client):
    older, newer, changed, retracted = pair
    body = client.get(f"/api/v1/editions/{older.slug}/diff/{newer.slug}/").json()
    assert [c["section_id"] for c in body["added"]] == ["a-new-claim"]
    assert [c["section_id"] for c in body["changed"]] == [changed]
    assert [c["section_id"] for c in body["retracted"]] == [retracted]
    page = client.get(f"/ko/editions/{older.slug}/diff/{newer.slug}/")
    assert page.status_code == 200 and "a-new-claim" in page.text
    same = client.get(f"/api/v1/editions/{older.slug}/diff/{older.slug}/").json()
    assert same["added"] == same["changed"] == same["retracted"] == []
    assert client.get("/editions/nope/diff/preview-0.1/").status_code == 404


def test_the_diff_names_tasks_added_and_retired(pair, client, lead):
    from catalogue.models import TaskDefinition

    older, newer, changed, _retracted = pair
    public = TaskDefinition.objects.filter(task_set="public").order_by("slug")
    retired, added = public[0], public[1]
    retired.lifecycle = "retired"
    retired.save()
    frozen = [t for t in older.catalogue_snapshot if t["slug"] != added.slug]
    Edition.objects.filter(pk=older.pk).update(catalogue_snapshot=frozen)
    body = client.get(f"/api/v1/editions/{older.slug}/diff/{newer.slug}/").json()
    assert [t["slug"] for t in body["tasks_added"]] == [added.slug]
    assert [t["slug"] for t in body["tasks_retired"]] == [retired.slug]
    page = client.get(f"/ko/editions/{older.slug}/diff/{newer.slug}/").text
    assert retired.slug in page and added.slug in page
    # Once published, the newer edition keeps its catalogue whatever happens later.
    claim_korean_approve(
        item=ChapterItem.objects.get(edition=newer, section_id=changed), actor=lead
    )
    edition_publish(edition_id=newer.pk, actor=lead)
    retired.lifecycle = "validated"
    retired.save()
    again = client.get(f"/api/v1/editions/{older.slug}/diff/{newer.slug}/").json()
    assert [t["slug"] for t in again["tasks_retired"]] == [retired.slug]


def test_publishing_refuses_missing_korean(pair, lead):
    _older, newer, changed, _retracted = pair
    ChapterItem.objects.filter(edition=newer, section_id=changed).update(detail_ko="")
    with pytest.raises(ValidationFailed) as refused:
        edition_publish(edition_id=newer.pk, actor=lead)
    assert changed in str(refused.value.field_errors)


def test_publishing_refuses_korean_not_approved_for_the_current_english(pair, lead, client):
    _older, newer, changed, _retracted = pair
    with pytest.raises(ValidationFailed) as refused:
        edition_publish(edition_id=newer.pk, actor=lead)
    reasons = " ".join(str(m) for m in refused.value.field_errors["edition"])
    assert f"Korean text of claim {changed} is not approved" in reasons
    assert "a-new-claim" not in reasons  # copied with its English unchanged
    item = ChapterItem.objects.get(edition=newer, section_id=changed)
    client.force_login(lead)
    client.post(
        "/admin/methodology/chapteritem/",
        {"action": "approve_korean", "_selected_action": [item.pk]},
    )
    item.refresh_from_db()
    assert item.korean_approved_by == lead
    assert edition_publish(edition_id=newer.pk, actor=lead).status == "published"


def test_publishing_refuses_an_unincorporated_correction(pair, lead):
    from django.utils import timezone

    from governance.models import Correction

    older, newer, _changed, _retracted = pair
    untouched = ChapterItem.objects.filter(edition=newer, item_type="claim").order_by("-pk")[1]
    Correction.objects.create(
        edition=older,
        section_id=untouched.section_id,
        text_en="Fix.",
        text_ko="정정.",
        decided_on=timezone.localdate(),
    )
    with pytest.raises(ValidationFailed) as refused:
        edition_publish(edition_id=newer.pk, actor=lead)
    assert "not incorporated" in str(refused.value.field_errors)
    untouched.detail_en += " Fixed."
    untouched.save()
    for item in ChapterItem.objects.filter(
        edition=newer, section_id__in=[untouched.section_id, _changed]
    ):
        claim_korean_approve(item=item, actor=lead)
    published = edition_publish(edition_id=newer.pk, actor=lead)
    assert published.status == "published"
    older.refresh_from_db()
    assert older.status == "superseded"


def test_archive_pages(pair, client):
    older, newer, _changed, _retracted = pair
    for path in [
        "/editions/",
        "/ko/editions/",
        f"/editions/{older.slug}/",
        f"/ko/editions/{newer.slug}/",
    ]:
        assert client.get(path).status_code == 200, path


def test_editions_start_and_publish_from_the_admin(client, lead):
    client.force_login(lead)
    current = Edition.objects.get(slug="preview-0.1")
    client.post(
        "/admin/methodology/edition/", {"action": "start_draft", "_selected_action": [current.pk]}
    )
    draft = Edition.objects.exclude(pk=current.pk).get()
    assert draft.status == "draft"
    ChapterItem.objects.filter(edition=draft).update(detail_ko="")
    asked = client.post(
        "/admin/methodology/edition/", {"action": "publish", "_selected_action": [draft.pk]}
    )
    # The confirmation page already names what refuses the publication.
    assert "has no Korean text" in asked.text
    refused = client.post(
        "/admin/methodology/edition/",
        {"action": "publish", "_selected_action": [draft.pk], "confirm": "yes"},
        follow=True,
    )
    assert "cannot be published yet" in refused.text
    draft.refresh_from_db()
    assert draft.status == "draft"


def test_the_edition_form_saves_its_own_slug_and_thresholds(client, lead):
    """Thresholds are set where the owner sets them: the edition form of a draft.

    Seed L401: "Publication thresholds are not set for this edition: MICA has not yet agreed
    runs per task, a minimum cell sample size, task coverage, or a maximum ineligible discard
    rate" -- the four are agreed per edition, so its form must save them (the project's own
    slug, preview-0.1, once failed the form's slug validation).
    """
    client.force_login(lead)
    edition = Edition.objects.get(slug="preview-0.1")
    url = f"/admin/methodology/edition/{edition.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields}
    data.update(min_eligible_runs="30", min_coverage="80", runs_per_task="3")
    data["max_ineligible_discard_rate"] = "10"
    saved = client.post(url, data, follow=True)
    assert saved.status_code == 200 and not saved.context.get("errors"), saved.context.get("errors")
    edition.refresh_from_db()
    assert edition.slug == "preview-0.1"
    assert (edition.min_eligible_runs, edition.runs_per_task) == (30, 3)
    assert float(edition.min_coverage) == 80 and float(edition.max_ineligible_discard_rate) == 10
    bad = client.post(url, {**data, "slug": "Preview 0.1!"})
    assert "lower-case letters and digits" in bad.text
    edition.refresh_from_db()
    assert edition.slug == "preview-0.1"


def test_starting_drafts_again_and_again_never_fails(client, lead):
    client.force_login(lead)
    current = Edition.objects.get(slug="preview-0.1")
    for _round in range(3):
        answer = client.post(
            "/admin/methodology/edition/",
            {"action": "start_draft", "_selected_action": [current.pk]},
        )
        assert answer.status_code == 302
    slugs = sorted(Edition.objects.exclude(pk=current.pk).values_list("slug", flat=True))
    assert slugs == ["preview-0.1-next", "preview-0.1-next-2", "preview-0.1-next-3"]
    long = Edition.objects.create(slug="x" * 40, version_label_en="X", version_label_ko="X")
    assert len(edition_start_draft(source=long).slug) <= 40
    assert edition_start_draft(source=long).slug != edition_start_draft(source=long).slug


def test_publishing_asks_first_and_the_published_label_says_no_draft(client, lead):
    """Seed L175: "A change ships as a new edition of this wiki and of the generated Markdown
    pack" -- publishing freezes an edition for good, so the admin asks first."""
    client.force_login(lead)
    current = Edition.objects.get(slug="preview-0.1")
    client.post(
        "/admin/methodology/edition/", {"action": "publish", "_selected_action": [current.pk]}
    )
    current.refresh_from_db()
    assert current.status == "draft", "nothing is published before it is confirmed"
    draft = edition_start_draft(source=current)
    assert draft.version_label_en.endswith("(draft)") and draft.version_label_ko.endswith("(초안)")
    asked = client.post(
        "/admin/methodology/edition/", {"action": "publish", "_selected_action": [draft.pk]}
    )
    assert "What will be frozen" in asked.text and "Yes, publish this edition" in asked.text
    chapters = ChapterItem.objects.filter(edition=draft).count()
    assert f"<td>{chapters}</td>" in asked.text
    done = client.post(
        "/admin/methodology/edition/",
        {"action": "publish", "_selected_action": [draft.pk], "confirm": "yes"},
        follow=True,
    )
    draft.refresh_from_db()
    assert draft.status == "published", done.text[-2000:]
    assert "draft" not in draft.version_label_en and "초안" not in draft.version_label_ko
    assert f"{draft.version_label_en} is published." in done.text
