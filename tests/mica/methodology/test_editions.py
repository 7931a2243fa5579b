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


@pytest.mark.vendor
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


@pytest.mark.vendor
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


@pytest.mark.vendor
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


@pytest.mark.vendor
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


@pytest.mark.vendor
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


@pytest.mark.vendor
def test_publishing_refuses_missing_korean(pair, lead):
    _older, newer, changed, _retracted = pair
    ChapterItem.objects.filter(edition=newer, section_id=changed).update(detail_ko="")
    with pytest.raises(ValidationFailed) as refused:
        edition_publish(edition_id=newer.pk, actor=lead)
    assert changed in str(refused.value.field_errors)


@pytest.mark.vendor
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


@pytest.mark.vendor
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


@pytest.mark.vendor
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


def _start_draft(client, edition, prefix=""):
    """ "Start a new draft" on `edition` in the edition list, as the method lead clicks it:
    (the edition it opened, the message it left)."""
    answer = client.post(
        f"{prefix}/admin/methodology/edition/",
        {"action": "start_draft", "_selected_action": [edition.pk]},
    )
    assert answer.status_code == 302, answer.content[-2000:]
    opened = client.get(answer["Location"])
    messages = [str(m) for m in opened.context["messages"]]
    return opened.context["original"], messages


def test_a_new_draft_takes_the_next_free_number_and_a_second_click_opens_it(client, lead):
    """Issue 34: ""Start a new draft" names the draft by the next free edition number and a
    second click opens the existing draft instead of failing or making another"."""
    client.force_login(lead)
    current = Edition.objects.get(slug="preview-0.1")
    draft, said = _start_draft(client, current)
    assert (draft.slug, draft.version_label_en, draft.version_label_ko) == (
        "preview-0.2",
        "Preview 0.2 (draft)",
        "프리뷰 0.2 (초안)",
    )
    assert said == ["Draft Preview 0.2 (draft) (preview-0.2) started."]
    again, said = _start_draft(client, current, prefix="/ko")
    assert again.pk == draft.pk and Edition.objects.count() == 2
    assert said == [
        "프리뷰 0.1 다음 초안이 이미 있습니다. 프리뷰 0.2 (초안)(preview-0.2)을(를) 열었습니다. "
        "다른 초안을 시작하려면 먼저 이 초안을 게시하세요."
    ]
    # Once the draft is published, the next click starts the number after it, and a click
    # on an older edition opens that new draft too.
    Edition.objects.filter(pk=draft.pk).update(status="published")
    third, _said = _start_draft(client, Edition.objects.get(pk=draft.pk))
    assert third.slug == "preview-0.3"
    assert _start_draft(client, current)[0].pk == third.pk


def test_the_next_number_is_the_next_free_one(lead):
    current = Edition.objects.get(slug="preview-0.1")
    Edition.objects.create(slug="preview-0.2", version_label_en="P", version_label_ko="P")
    nine = Edition.objects.create(slug="v-0.9", version_label_en="V 0.9", version_label_ko="V 0.9")
    assert edition_start_draft(source=current).slug == "preview-0.3"
    assert edition_start_draft(source=nine).version_label_en == "V 0.10 (draft)"
    long = Edition.objects.create(slug="x" * 40, version_label_en="X", version_label_ko="X")
    first, second = edition_start_draft(source=long), edition_start_draft(source=long)
    assert (first.slug, first.version_label_en) == ("x" * 38 + "-2", "X 2 (draft)")
    assert second.slug == "x" * 38 + "-3" and len(second.slug) == 40


@pytest.mark.vendor
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


# The help of each threshold field, as the edition form shows it: its unit first.
THRESHOLD_HELP = {
    "": {
        "min_eligible_runs": "In runs: the fewest eligible runs a cell needs",
        "min_coverage": "In percent, from 0 to 100: the share of a market",
        "runs_per_task": "In runs: how often each attempted task must be run in a cell",
        "max_ineligible_discard_rate": "In percent, from 0 to 100: the largest share of a cell",
    },
    "/ko": {
        "min_eligible_runs": "단위: 회. 셀의 결과를 공개하려면 필요한 최소 유효 실행 수",
        "min_coverage": "단위: %(0~100). 한 셀이 그 시장에서 해당 계열의 표준 과제",
        "runs_per_task": "단위: 회. 셀에서 시도한 과제마다 필요한 실행 횟수",
        "max_ineligible_discard_rate": "단위: %(0~100). 셀의 시도 가운데 부적격",
    },
}


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_each_threshold_field_says_its_unit_and_refuses_a_share_above_100(client, lead, prefix):
    """Seed L401: "MICA has not yet agreed runs per task, a minimum cell sample size, task
    coverage, or a maximum ineligible discard rate": whoever sets them reads each one's
    unit; a share (coverage, discard rate) is a percentage from 0 to 100, refused above,
    in the editor's language, never left for the gate to fail on."""
    client.force_login(lead)
    edition = Edition.objects.get(slug="preview-0.1")
    url = f"{prefix}/admin/methodology/edition/{edition.pk}/change/"
    page = client.get(url)
    for name, help_text in THRESHOLD_HELP[prefix].items():
        shown = page.text.split(f'id="id_{name}_helptext"', 1)[1].split("</div>", 1)[0]
        assert help_text in shown.replace("&#x27;", "'"), (name, shown)
    form = page.context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields}
    for name in ("min_coverage", "max_ineligible_discard_rate"):
        refused = client.post(url, {**data, name: "100.01"})
        assert refused.status_code == 200, name  # the form again, with its error
        error = " ".join(refused.context["adminform"].form.errors[name])
        assert error == (
            "100 이하의 값을 입력해 주세요."
            if prefix
            else "Ensure this value is less than or equal to 100."
        )
        data[name] = "100"
        assert client.post(url, data).status_code == 302, name
    edition.refresh_from_db()
    assert edition.min_coverage == 100 and edition.max_ineligible_discard_rate == 100


@pytest.mark.vendor
def test_the_seeded_preview_is_labelled_as_what_it_is(client, lead):
    """PORTAL.md: "A published edition is immutable; changes ship as a new edition": the
    seeded Preview 0.1 is a draft the site shows while nothing is published, and the
    edition list, the diff and the JSON say so rather than presenting it as an edition."""
    pages = {
        "": ("No edition has been published yet. Preview 0.1 is a preview", "Preview: a draft"),
        "/ko": (
            "아직 게시된 에디션이 없습니다. 프리뷰 0.1은(는) 프리뷰입니다.",
            "프리뷰: 게시된 에디션이 아닌 초안",
        ),
    }
    for prefix, (notice, standing) in pages.items():
        listed = client.get(f"{prefix}/editions/").text
        assert notice in listed and f'<td class="standing-preview">{standing}' in listed
        diff = client.get(f"{prefix}/editions/preview-0.1/diff/preview-0.1/").text
        assert f'<dd class="standing-preview">{standing}' in diff
    [listed] = client.get("/api/v1/editions/").json()
    assert (listed["standing"], listed["standing_label"]["ko"][:3]) == ("preview", "프리뷰")
    # Published, it is an edition; the next draft is one, compared with it at one click.
    edition_publish(edition_id=Edition.objects.get(slug="preview-0.1").pk, actor=lead)
    draft = edition_start_draft(source=Edition.objects.get(slug="preview-0.1"))
    listed = client.get("/editions/").text
    assert "No edition has been published yet" not in listed
    assert '<td class="standing-published">Published</td>' in listed
    assert '<td class="standing-draft">Draft, not published yet</td>' in listed
    since = f'href="/editions/preview-0.1/diff/{draft.slug}/"><strong>Changes since Preview 0.1'
    assert f"{since}, the last published edition" in listed
    standings = {e["slug"]: e["standing"] for e in client.get("/api/v1/editions/").json()}
    assert standings == {"preview-0.1": "published", draft.slug: "draft"}
