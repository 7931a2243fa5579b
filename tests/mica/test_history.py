"""History on every content record: revisions with who and when, compare, revert.

The admin is driven as an editor drives it: the change form is read and posted back.
Writes run their after-commit callbacks, as in a real request, so the content revision
moves and the page cache serves the new text.
"""

import re

import pytest
from django import forms
from django.test import Client
from django.urls import reverse
from django.utils import translation

from mica.history import history_column_errors, tracked_models
from mica.methodology.models import ChapterItem, Edition
from tests.factories import LeadFactory, StaffFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lead(client, canonical_content):
    user = LeadFactory(username="history-lead")
    client.force_login(user)
    return user


def _field_values(form):
    """What the browser posts for a form as it is shown (readonly fields are not in it)."""
    data = {}
    for name, field in form.fields.items():
        if field.disabled:
            continue
        bound = form[name]
        value = bound.value()
        if isinstance(field, forms.BooleanField):
            if value:
                data[bound.html_name] = "on"
        elif isinstance(field.widget, forms.MultiWidget):
            for index, part in enumerate(field.widget.decompress(value)):
                data[f"{bound.html_name}_{index}"] = "" if part is None else str(part)
        elif isinstance(value, list | tuple):
            data[bound.html_name] = [str(v) for v in value]
        else:
            data[bound.html_name] = "" if value is None else str(value)
    return data


def form_data(response, **changes):
    """The change form (and its inline rows) of an admin page, with `changes` applied."""
    data = _field_values(response.context["adminform"].form)
    for inline in response.context.get("inline_admin_formsets") or []:
        formset = inline.formset
        data.update(_field_values(formset.management_form))
        for row in formset.forms:
            data.update(_field_values(row))
    data.update(changes)
    return data


def edit(client, url, **changes):
    """Open a change form, change some fields, save; returns the response."""
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    return client.post(url, form_data(page, **changes))


PLAIN = re.compile(r"^[\w\s.,;:()\-–·%]+$")


def claim_on_the_page():
    """A claim of the edition /methodology/ shows, in plain words (the page prints it as is)."""
    claims = ChapterItem.objects.filter(item_type="claim", edition__status="draft")
    return next(
        item
        for item in claims.order_by("pk")
        if PLAIN.match(item.detail_en) and PLAIN.match(item.detail_ko)
    )


def admin_url(record, view="change", *args):
    """The English admin URL (reverse() follows the language the last request left active)."""
    opts = record._meta
    with translation.override("en"):
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=[record.pk, *args])


def test_every_tracked_history_keeps_english_and_korean():
    assert len(tracked_models()) >= 30
    assert history_column_errors() == []
    history = ChapterItem.history.model
    names = {field.name for field in history._meta.fields}
    assert {"term_en", "term_ko", "detail_en", "detail_ko", "link_label_ko"} <= names
    # The base column only mirrors the language active at save time: not kept.
    assert "detail" not in names


def test_edit_twice_compare_the_first_with_the_third_and_revert(
    client, lead, page_cache, django_capture_on_commit_callbacks
):
    reader = Client()
    item = claim_on_the_page()
    original_en, original_ko = item.detail_en, item.detail_ko
    assert original_en in reader.get("/methodology/").text  # now cached
    assert original_ko in reader.get("/ko/methodology/").text
    assert item.history.count() == 1  # loaded with the canonical content
    url = admin_url(item)

    with django_capture_on_commit_callbacks(execute=True):
        saved = edit(client, url, detail_en="The first rewrite of this claim.")
    assert saved.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        saved = edit(client, url, detail_ko="이 주장의 한국어 문장을 고쳐 썼습니다.")
    assert saved.status_code == 302
    assert "The first rewrite of this claim." in reader.get("/methodology/").text
    assert "이 주장의 한국어 문장을 고쳐 썼습니다." in reader.get("/ko/methodology/").text

    history = client.get(admin_url(item, "history"))
    assert history.status_code == 200
    assert [r.number for r in history.context["revisions"]] == [3, 2, 1]
    assert "history-lead" in history.text

    compared = client.get(admin_url(item, "history_compare"), {"old": 1, "new": 3})
    assert compared.status_code == 200
    text = compared.text
    for sentence in (original_en, original_ko):
        assert any(word in text for word in sentence.split()[:3])
    assert "rewrite" in text and "고쳐" in text
    labels = [(g["label"], [r["language"] for r in g["rows"]]) for g in compared.context["groups"]]
    assert labels == [("Detail", ["English", "Korean"])]

    first = item.history.order_by("history_date", "history_id").first()
    revision_url = admin_url(item, "simple_history", first.history_id)
    page = client.get(revision_url)
    assert page.status_code == 200
    assert 'value="Revert to revision 1"' in page.text
    with django_capture_on_commit_callbacks(execute=True):
        reverted = client.post(revision_url, form_data(page))
    assert reverted.status_code == 302, reverted.context and reverted.context["errors"]
    item.refresh_from_db()
    assert (item.detail_en, item.detail_ko) == (original_en, original_ko)

    assert original_en in reader.get("/methodology/").text
    assert "The first rewrite of this claim." not in reader.get("/methodology/").text
    assert original_ko in reader.get("/ko/methodology/").text
    assert "이 주장의 한국어 문장을 고쳐 썼습니다." not in reader.get("/ko/methodology/").text

    history = client.get(admin_url(item, "history"), follow=True)
    revisions = history.context["revisions"]
    assert [r.number for r in revisions] == [4, 3, 2, 1]
    assert [r.history_user for r in revisions] == [lead, lead, lead, None]
    assert revisions[0].reason == "Reverted to revision 1"
    assert all(r.history_date for r in revisions)
    assert "Revision 1 is restored as revision 4." in history.text
    assert history.text.count("history-lead") >= 3
    # Revision 4 holds what revision 1 held.
    again = client.get(admin_url(item, "history_compare"), {"old": 1, "new": 4})
    assert again.context["groups"] == []


def test_the_history_pages_speak_korean(client, lead):
    item = claim_on_the_page()
    item.detail_ko = item.detail_ko + " 고침."
    item.save()
    base = f"/ko{admin_url(item, 'history')}"
    history = client.get(base)
    assert history.status_code == 200
    assert "개정 2" in history.text and "두 개정 비교" in history.text
    compared = client.get(f"/ko{admin_url(item, 'history_compare')}", {"old": 1, "new": 2})
    assert "한국어" in compared.text and "달라진 필드" in compared.text


def test_a_korean_only_edit_is_a_change_between_two_revisions(client, lead):
    item = claim_on_the_page()
    assert item.history.count() == 1
    item.detail_ko = "한국어만 고친 문장."
    item.save()
    newer, older = item.history.order_by("-history_date", "-history_id")[:2]
    delta = newer.diff_against(older)
    assert delta.changed_fields == ["detail_ko"]
    assert delta.changes[0].old != "한국어만 고친 문장." == delta.changes[0].new
    compared = client.get(admin_url(item, "history_compare"), {"old": 1, "new": 2})
    rows = compared.context["groups"][0]["rows"]
    assert [(r["language"], r["changed"]) for r in rows] == [("English", False), ("Korean", True)]
    assert "<ins>" in str(rows[1]["new"])


def test_a_published_editions_record_is_never_reverted(client, lead):
    item = claim_on_the_page()
    item.detail_en = "Edited while the edition was a draft."
    item.save()
    Edition.objects.filter(pk=item.edition_id).update(status="published")
    first = item.history.order_by("history_date", "history_id").first()
    revision_url = admin_url(item, "simple_history", first.history_id)

    history = client.get(admin_url(item, "history"))
    assert "is published and cannot change" in history.text
    page = client.get(revision_url)
    assert page.status_code == 200
    assert "Revert to revision" not in page.text
    assert "is published and cannot change" in page.text

    refused = client.post(revision_url, {"detail_en": first.detail_en}, follow=True)
    assert refused.status_code == 200
    assert "is published and cannot change; changes go into a new edition." in refused.text
    item.refresh_from_db()
    assert item.detail_en == "Edited while the edition was a draft."
    assert item.history.count() == 2


def test_a_frozen_registration_is_not_reverted_and_a_late_refusal_is_shown(
    client, lead, monkeypatch
):
    from markets.admin import PlatformRegistrationAdmin
    from markets.models import PlatformRegistration
    from markets.services import platform_registration_register
    from mica.history_admin import HistoryAdmin

    # The shipped sets are pre-registered: a draft replacing one of them.
    frozen = PlatformRegistration.objects.filter(market_edition__edition__status="draft").first()
    registration = PlatformRegistration.objects.create(
        market_edition=frozen.market_edition,
        task_family=frozen.task_family,
        supersedes=frozen,
        supersede_reason_en="A test.",
        supersede_reason_ko="시험.",
    )
    platform = frozen.platforms.get(rank=1)
    platform.pk = platform.id = None
    platform.registration = registration
    platform.save()
    first = registration.history.earliest()
    revision_url = admin_url(registration, "simple_history", first.history_id)
    page = client.get(revision_url)
    assert 'value="Revert to revision 1"' in page.text
    platform_registration_register(registration_id=registration.pk, actor=lead)
    frozen = "This platform set is pre-registered and frozen"
    assert frozen in client.get(admin_url(registration, "history")).text
    assert "Revert to revision" not in client.get(revision_url).text

    # Frozen between reading the form and posting it: the save refuses, and says why.
    monkeypatch.setattr(PlatformRegistrationAdmin, "history_refusal", HistoryAdmin.history_refusal)
    refused = client.post(revision_url, form_data(page), follow=True)
    assert refused.status_code == 200
    assert frozen in refused.text
    registration.refresh_from_db()
    assert registration.status == "registered"
    assert registration.history.count() == 2


def test_the_compare_view_refuses_unknown_revisions(client, lead):
    item = claim_on_the_page()
    url = admin_url(item, "history_compare")
    assert client.get(url, {"old": 1, "new": 9}).status_code == 404
    assert client.get(url, {"old": "x"}).status_code == 404
    assert client.get(url.replace(f"/{item.pk}/", "/no-such-id/")).status_code == 404
    only = client.get(url)
    assert only.status_code == 200 and "No field differs" in only.text
    everything = client.get(url, {"old": 1, "new": 1, "all": 1})
    assert any(g["label"] == "Term" for g in everything.context["groups"])


def test_a_task_version_title_edit_is_in_its_history(client, lead):
    from catalogue.models import TaskVersion

    version = TaskVersion.objects.order_by("pk").first()
    before = version.history.count()
    response = edit(client, admin_url(version), title_en="A retitled task")
    assert response.status_code == 302
    latest = version.history.latest()
    assert version.history.count() == before + 1
    assert (latest.title_en, latest.history_user.username) == ("A retitled task", "history-lead")
    history = client.get(admin_url(version, "history"))
    assert "Title (English)" in history.text


def test_a_market_situation_edit_is_in_its_history(client, lead):
    from markets.models import IntegrationSituation

    situation = IntegrationSituation.objects.filter(market_edition__edition__status="draft").first()
    response = edit(client, admin_url(situation), detail_ko="상황 설명을 고쳤습니다.")
    assert response.status_code == 302
    latest = situation.history.latest()
    assert latest.detail_ko == "상황 설명을 고쳤습니다."
    assert latest.history_user.username == "history-lead"
    compared = client.get(admin_url(situation, "history_compare"))
    assert "고쳤습니다" in compared.text


def test_a_market_record_of_a_published_edition_is_not_reverted(client, lead):
    from markets.models import IntegrationSituation

    situation = IntegrationSituation.objects.filter(market_edition__edition__status="draft").first()
    Edition.objects.filter(pk=situation.market_edition.edition_id).update(status="published")
    first = situation.history.earliest()
    refused = client.post(admin_url(situation, "simple_history", first.history_id), {}, follow=True)
    assert "is published and cannot change" in refused.text
    assert situation.history.count() == 1


def test_a_disclosure_edit_is_in_its_history(canonical_content):
    from governance.models import DisclosureStatement

    statement = DisclosureStatement.objects.filter(superseded_at__isnull=True).first()
    statement.statement_ko = statement.statement_ko + " 보완."
    statement.save()
    newer, older = statement.history.order_by("-history_date", "-history_id")[:2]
    assert newer.diff_against(older).changed_fields == ["statement_ko"]


def test_every_content_admin_offers_history(client, lead):
    from django.contrib import admin

    from mica.history_admin import HistoryAdmin

    tracked = set(tracked_models())
    assert len(tracked) >= 10, "the content records are tracked"
    for model, model_admin in admin.site._registry.items():
        if model not in tracked:
            continue
        assert isinstance(model_admin, HistoryAdmin), model
        record = model._default_manager.order_by("pk").first()
        if record is None:
            continue
        change = client.get(admin_url(record))
        assert change.status_code == 200, model
        assert admin_url(record, "history") in change.text, model
        history = client.get(admin_url(record, "history"))
        assert history.status_code == 200, model
        assert re.search(r"Revision \d", history.text), model


def test_the_change_form_keeps_both_language_fields(client, lead):
    item = claim_on_the_page()
    page = client.get(admin_url(item))
    assert 'name="detail_en"' in page.text and 'name="detail_ko"' in page.text
    assert "mt-field-detail-ko" in page.text


def test_a_local_editor_reads_only_the_history_of_their_markets(client, lead):

    from django.contrib.auth.models import Permission

    from markets.models import CompetenceRole, IntegrationSituation
    from tests.factories import grant

    editor = StaffFactory(username="kr-editor")
    editor.user_permissions.add(*Permission.objects.filter(content_type__app_label="markets"))
    grant(editor, "KR", CompetenceRole.AUTHOR, lead)
    client.force_login(editor)
    situations = IntegrationSituation.objects.filter(market_edition__edition__status="draft")
    kr = situations.filter(market_edition__market__code="KR").first()
    jp = situations.filter(market_edition__market__code="JP").first()
    assert client.get(admin_url(kr, "history")).status_code == 200
    first = jp.history.earliest()
    for url in (
        admin_url(jp, "history"),
        admin_url(jp, "history_compare"),
        admin_url(jp, "simple_history", first.history_id),
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(admin_url(jp, "simple_history", first.history_id), {}).status_code == 404
    assert jp.history.count() == 1
