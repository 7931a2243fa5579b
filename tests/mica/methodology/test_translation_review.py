"""Approving a claim's Korean text is a review: four eyes, a reviewer competent in Korean,
and publishing names any approval its own editor gave."""

import datetime

import pytest
from django.utils import translation

from mica.errors import PermissionRefused, ValidationFailed
from mica.methodology.models import ChapterItem, Edition
from mica.methodology.selectors import claim_korean_is_approved, claim_text_digest
from mica.methodology.services import claim_korean_approve, edition_publish
from tests.factories import LeadFactory, StaffFactory, grant_language

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(canonical_content):
    """An English editor, a Korean translator and a reviewer, each competent in Korean."""
    lead = LeadFactory()
    staff = {
        name: StaffFactory(username=name, app_permissions=("methodology",))
        for name in ("english-editor", "korean-translator", "reviewer")
    }
    for person in staff.values():
        grant_language(person, "ko", verified_by=lead)
    return lead, staff


@pytest.fixture
def claim(canonical_content):
    return ChapterItem.objects.filter(item_type="claim", edition__status="draft").order_by("pk")[0]


def edit(item, editor, **texts):
    """Save a change of the claim as `editor` (the admin records the editor the same way)."""
    for field, text in texts.items():
        setattr(item, field, text)
    item._history_user = editor
    item.save()
    return ChapterItem.objects.get(pk=item.pk)


def test_the_last_editor_of_either_text_may_not_approve_it(claim, people):
    """PORTAL.md, Four-eyes review: "An approval counts only from a reviewer competent for
    that market who is not the author and not an editor of the revision under review";
    a translation is reviewed the same way: not by the last editor of its English source,
    nor by the last editor of the Korean text."""
    _lead, staff = people
    claim = edit(claim, staff["english-editor"], detail_en=claim.detail_en + " Narrowed.")
    claim = edit(claim, staff["korean-translator"], detail_ko=claim.detail_ko + " 좁혔습니다.")
    with pytest.raises(PermissionRefused, match="English source"):
        claim_korean_approve(item=claim, actor=staff["english-editor"])
    with pytest.raises(PermissionRefused, match="Korean text"):
        claim_korean_approve(item=claim, actor=staff["korean-translator"])
    assert not claim_korean_is_approved(ChapterItem.objects.get(pk=claim.pk))

    approved = claim_korean_approve(item=claim, actor=staff["reviewer"])
    stored = ChapterItem.objects.get(pk=claim.pk)
    assert claim_korean_is_approved(stored) and stored.korean_approved_by == staff["reviewer"]
    assert stored.korean_approved_digest == claim_text_digest(
        claim.term_en, claim.detail_en, claim.term_ko, claim.detail_ko
    )
    assert stored.korean_approved_at == approved.korean_approved_at is not None


def test_an_earlier_editor_may_review_once_someone_else_edited_last(claim, people):
    """The rule names the last editor: who edited an earlier revision reviews the current one."""
    _lead, staff = people
    claim = edit(claim, staff["reviewer"], detail_en=claim.detail_en + " First.")
    claim = edit(claim, staff["english-editor"], detail_en=claim.detail_en + " Second.")
    assert claim_korean_approve(item=claim, actor=staff["reviewer"]).korean_approved_by_id


def test_only_a_current_korean_competence_approves(claim, people):
    lead, staff = people
    stranger = StaffFactory(username="no-korean", app_permissions=("methodology",))
    with pytest.raises(PermissionRefused, match="Korean language competence"):
        claim_korean_approve(item=claim, actor=stranger)
    with pytest.raises(PermissionRefused):
        claim_korean_approve(item=claim, actor=lead)  # a superuser holds none by office
    lapsed = staff["reviewer"].language_competences.get()
    lapsed.valid_until = datetime.date.today() - datetime.timedelta(days=1)
    lapsed.save()
    with pytest.raises(PermissionRefused):
        claim_korean_approve(item=claim, actor=staff["reviewer"])
    grant_language(stranger, "en", verified_by=lead)
    with pytest.raises(PermissionRefused):
        claim_korean_approve(item=claim, actor=stranger)  # English is not the translation's


@pytest.mark.parametrize(
    "prefix, words",
    [("", "you last edited the English source"), ("/ko", "영어 원문을 마지막으로 고친")],
)
def test_the_admin_action_refuses_the_editor_in_their_language(
    client, claim, people, prefix, words
):
    _lead, staff = people
    editor = staff["english-editor"]
    client.force_login(editor)
    change = f"{prefix}/admin/methodology/chapteritem/{claim.pk}/change/"
    form = client.get(change).context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    data.update(detail_en=claim.detail_en + " Edited in the admin.", _save="Save")
    assert client.post(change, data).status_code == 302
    ChapterItem.objects.filter(pk=claim.pk).update(korean_approved_digest="")
    response = client.post(
        f"{prefix}/admin/methodology/chapteritem/",
        {"action": "approve_korean", "_selected_action": [claim.pk]},
        follow=True,
    )
    assert words in response.text
    assert not claim_korean_is_approved(ChapterItem.objects.get(pk=claim.pk))


@pytest.mark.vendor
def test_publishing_names_a_claim_approved_by_its_own_editor(claim, people):
    """An approval recorded by the last editor (before this rule, or by a write that went
    around the review) does not pass: publishing names the claim, in both languages."""
    lead, staff = people
    editor = staff["english-editor"]
    claim = edit(claim, editor, detail_en=claim.detail_en + " Self-approved.")
    ChapterItem.objects.filter(pk=claim.pk).update(
        korean_approved_digest=claim_text_digest(
            claim.term_en, claim.detail_en, claim.term_ko, claim.detail_ko
        ),
        korean_approved_by=editor,
    )
    edition = Edition.objects.get(pk=claim.edition_id)
    with pytest.raises(ValidationFailed) as refused:
        edition_publish(edition_id=edition.pk, actor=lead)
    reasons = " ".join(str(m) for m in refused.value.field_errors["edition"])
    assert f"claim {claim.section_id} was approved by the person who last edited" in reasons
    with translation.override("ko"), pytest.raises(ValidationFailed) as korean:
        edition_publish(edition_id=edition.pk, actor=lead)
    assert claim.section_id in str(korean.value.field_errors)
    assert "마지막으로 고친 사람" in str(korean.value.field_errors)

    claim_korean_approve(item=ChapterItem.objects.get(pk=claim.pk), actor=staff["reviewer"])
    assert edition_publish(edition_id=edition.pk, actor=lead).status == "published"
