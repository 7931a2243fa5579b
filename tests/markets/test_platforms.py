"""A pre-registered platform set is frozen; only a reasoned replacement, frozen by someone
who did not draft it, takes its place.

Seed: "The selected platform, version, snapshot date and ordered fallback list are fixed
before systems run. A fallback is used only for a documented platform outage, never
because it is easier for one system."
"""

import datetime

import pytest
from django.core.management import call_command

from markets.models import (
    OutageState,
    PlatformOutage,
    PlatformRegistration,
    RegistrationStatus,
    RepresentativePlatform,
)
from markets.services import (
    platform_registration_draft_replacement,
    platform_registration_register,
    registration_drafters,
    require_platforms_editable,
)
from markets.workflows import outage_decide, outage_report
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from tests.factories import StaffFactory, grant

pytestmark = pytest.mark.django_db

REASON = {
    "reason_en": "The primary service closed its mail app.",
    "reason_ko": "주 서비스가 메일 앱을 종료했습니다.",
}


def kr_registration():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR",
        task_family="email-calendar",
        status=RegistrationStatus.REGISTERED,
    )


def kr_staff(username, lead):
    from django.contrib.auth.models import Permission

    user = StaffFactory(username=username)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="markets"))
    grant(user, "KR", "reviewer", lead)
    return user


def a_draft(actor, family="email-calendar"):
    """A draft set of one platform in KR, saved by `actor` (a revision names them)."""
    frozen = PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family=family, status="registered"
    )
    frozen.status = RegistrationStatus.SUPERSEDED  # out of the way of the one-per-family rule
    frozen.save()
    draft = PlatformRegistration(market_edition=frozen.market_edition, task_family=family)
    draft._history_user = actor
    draft.save()
    platform = frozen.platforms.get(rank=1)
    platform.pk = platform.id = None
    platform.registration = draft
    platform._history_user = actor
    platform.save()
    return draft


def test_the_canonical_sets_are_pre_registered_as_the_content_dates_them(canonical_content):
    """The content's decision: every shipped set is frozen as of the day its sources were
    checked, by nobody in particular (docs/reference/gate.md, "Representative platforms")."""
    registrations = PlatformRegistration.objects.filter(market_edition__market__code="KR")
    assert registrations.count() == 10
    assert {r.status for r in registrations} == {RegistrationStatus.REGISTERED}
    assert {r.registered_at for r in registrations} == {
        datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)
    }
    with pytest.raises(ValidationFailed):
        require_platforms_editable(kr_registration())


def test_the_drafter_cannot_freeze_what_they_drafted(canonical_content, lead):
    """Four eyes: "the one who drafts may not freeze"."""
    author, other = kr_staff("kr-drafter", lead), kr_staff("kr-freezer", lead)
    draft = a_draft(author)
    assert registration_drafters(draft) == {author.pk}
    with pytest.raises(PermissionRefused):
        platform_registration_register(registration_id=draft.pk, actor=author)
    registered = platform_registration_register(registration_id=draft.pk, actor=other)
    assert registered.status == RegistrationStatus.REGISTERED and registered.registered_at
    assert registered.registered_by == other
    with pytest.raises(ValidationFailed):
        require_platforms_editable(registered)
    with pytest.raises(InvalidTransition):
        platform_registration_register(registration_id=draft.pk, actor=lead)


def test_editing_a_platform_of_the_draft_makes_its_editor_a_drafter(canonical_content, lead):
    author, editor = kr_staff("kr-drafter", lead), kr_staff("kr-editor-2", lead)
    draft = a_draft(author)
    platform = draft.platforms.get()
    platform.name_en = "Edited"
    platform._history_user = editor
    platform.save()
    assert registration_drafters(draft) == {author.pk, editor.pk}
    with pytest.raises(PermissionRefused):
        platform_registration_register(registration_id=draft.pk, actor=editor)


def test_a_content_reload_never_rewrites_a_frozen_set(canonical_content, lead):
    registration = kr_registration()
    platform = registration.platforms.get(rank=1)
    platform.name_en = "Edited after registration"
    platform.save()
    call_command("load_canonical_content", "markets", stdout=open("/dev/null", "w"))
    assert registration.platforms.get(rank=1).name_en == "Edited after registration"


def test_a_replacement_needs_a_reason_in_both_languages(canonical_content, lead):
    registration = kr_registration()
    for reasons in ({**REASON, "reason_ko": ""}, {**REASON, "reason_en": " \u200b "}):
        with pytest.raises(ValidationFailed):
            platform_registration_draft_replacement(
                registration_id=registration.pk, actor=lead, **reasons
            )


def test_a_replacement_supersedes_the_set_in_force_only_when_someone_else_freezes_it(
    canonical_content, lead
):
    registration = kr_registration()
    drafter, freezer = kr_staff("kr-drafter", lead), kr_staff("kr-freezer", lead)
    draft = platform_registration_draft_replacement(
        registration_id=registration.pk, actor=drafter, **REASON
    )
    assert draft.status == RegistrationStatus.DRAFT and draft.supersedes == registration
    assert draft.supersede_reason_ko == REASON["reason_ko"]
    assert [p.name_en for p in draft.platforms.all()] == [
        p.name_en for p in registration.platforms.all()
    ]
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.REGISTERED  # still in force
    with pytest.raises(InvalidTransition):  # one draft per family
        platform_registration_draft_replacement(
            registration_id=registration.pk, actor=freezer, **REASON
        )
    with pytest.raises(PermissionRefused):
        platform_registration_register(registration_id=draft.pk, actor=drafter)
    platform_registration_register(registration_id=draft.pk, actor=freezer)
    registration.refresh_from_db()
    draft.refresh_from_db()
    assert registration.status == RegistrationStatus.SUPERSEDED
    assert draft.status == RegistrationStatus.REGISTERED


def test_a_draft_cannot_be_replaced(canonical_content, lead):
    draft = a_draft(kr_staff("kr-drafter", lead))
    with pytest.raises(InvalidTransition):
        platform_registration_draft_replacement(registration_id=draft.pk, actor=lead, **REASON)


def test_an_author_drafts_and_a_reviewer_of_the_market_freezes(canonical_content, kr_editor, lead):
    """As in local review: a competence for the market to draft a replacement, and a
    reviewer's or lead's to freeze what someone else drafted."""
    jp = PlatformRegistration.objects.get(
        market_edition__market__code="JP", task_family="email-calendar"
    )
    with pytest.raises(PermissionRefused):
        platform_registration_draft_replacement(registration_id=jp.pk, actor=kr_editor, **REASON)
    draft = platform_registration_draft_replacement(
        registration_id=kr_registration().pk, actor=kr_editor, **REASON
    )
    with pytest.raises(PermissionRefused):  # an author, and its drafter besides
        platform_registration_register(registration_id=draft.pk, actor=kr_editor)
    other_author = StaffFactory(username="kr-author-2")
    grant(other_author, "KR", "author", lead)
    with pytest.raises(PermissionRefused, match="reviewer"):
        platform_registration_register(registration_id=draft.pk, actor=other_author)
    platform_registration_register(registration_id=draft.pk, actor=kr_staff("kr-reviewer", lead))


def test_the_admin_drafts_a_replacement_and_another_person_freezes_it(
    client, canonical_content, lead
):
    """The registry's workflow from the admin, in English and Korean."""
    registration = kr_registration()
    drafter, freezer = kr_staff("kr-drafter", lead), kr_staff("kr-freezer", lead)
    url = "/admin/markets/platformregistration/"
    client.force_login(drafter)
    frozen = client.get(f"{url}{registration.pk}/change/")
    assert 'name="platforms-0-name_en"' not in frozen.text
    asked = client.post(url, {"action": "start_replacement", "_selected_action": [registration.pk]})
    assert "Reason for superseding (Korean)" in asked.text
    korean = client.post(
        f"/ko{url}", {"action": "start_replacement", "_selected_action": [registration.pk]}
    )
    assert "대체 사유(한국어)" in korean.text
    done = client.post(
        url,
        {
            "action": "start_replacement",
            "_selected_action": [registration.pk],
            "confirm": "yes",
            **REASON,
        },
        follow=True,
    )
    draft = PlatformRegistration.objects.get(supersedes=registration)
    assert "Someone else freezes it." in done.text
    editable = client.get(f"{url}{draft.pk}/change/")
    assert 'name="platforms-0-name_en"' in editable.text
    assert "kr-drafter" in editable.text  # drafted by, who may not freeze it
    refused = client.post(
        url, {"action": "pre_register", "_selected_action": [draft.pk]}, follow=True
    )
    assert "Nobody freezes a platform set they drafted" in refused.text
    client.force_login(freezer)
    client.post(url, {"action": "pre_register", "_selected_action": [draft.pk]})
    draft.refresh_from_db()
    registration.refresh_from_db()
    assert (draft.status, registration.status) == ("registered", "superseded")


def test_a_market_page_shows_the_set_in_force_not_its_draft_replacement(
    client, canonical_content, lead
):
    registration = kr_registration()
    draft = platform_registration_draft_replacement(
        registration_id=registration.pk, actor=lead, **REASON
    )
    RepresentativePlatform.objects.filter(registration=draft, rank=1).update(
        name_en="Not yet in force"
    )
    page = client.get("/markets/kr/")
    assert "Not yet in force" not in page.text


# --- Outages ----------------------------------------------------------------------------


def test_an_outage_is_accepted_by_someone_other_than_its_reporter(canonical_content, lead):
    """Seed: "A fallback is used only for a documented platform outage"."""
    reporter, decider = kr_staff("kr-reporter", lead), kr_staff("kr-decider", lead)
    primary = kr_registration().platforms.get(rank=1)
    day = datetime.date(2026, 12, 1)
    with pytest.raises(ValidationFailed):
        outage_report(
            platform=primary, first_day=day, last_day=day, evidence=" \u200b", actor=reporter
        )
    with pytest.raises(ValidationFailed):
        outage_report(
            platform=primary,
            first_day=day,
            last_day=day - datetime.timedelta(days=1),
            evidence="Status page",
            actor=reporter,
        )
    outage = outage_report(
        platform=primary,
        first_day=day,
        last_day=day,
        evidence="https://status.example/2026-12-01",
        actor=reporter,
    )
    assert outage.state == OutageState.REPORTED
    with pytest.raises(PermissionRefused):
        outage_decide(outage_id=outage.pk, action="accept", reason="Seen.", actor=reporter)
    author = StaffFactory(username="kr-author-2")
    grant(author, "KR", "author", lead)
    with pytest.raises(PermissionRefused, match="reviewer"):
        outage_decide(outage_id=outage.pk, action="accept", reason="Seen.", actor=author)
    with pytest.raises(ValidationFailed):
        outage_decide(outage_id=outage.pk, action="accept", reason=" ", actor=decider)
    outage_decide(outage_id=outage.pk, action="accept", reason="Seen too.", actor=decider)
    outage.refresh_from_db()
    assert outage.state == OutageState.ACCEPTED
    event = outage.events.get()
    assert (event.action, event.actor, event.reason) == ("accept", decider, "Seen too.")
    with pytest.raises(InvalidTransition):
        outage_decide(outage_id=outage.pk, action="reject", reason="No.", actor=lead)


def test_a_draft_platform_has_no_outage_and_a_stranger_reports_none(
    canonical_content, lead, kr_editor
):
    draft = a_draft(lead)
    day = datetime.date(2026, 12, 1)
    with pytest.raises(ValidationFailed):
        outage_report(
            platform=draft.platforms.get(), first_day=day, last_day=day, evidence="x", actor=lead
        )
    jp = PlatformRegistration.objects.get(
        market_edition__market__code="JP", task_family="email-calendar"
    )
    with pytest.raises(PermissionRefused):
        outage_report(
            platform=jp.platforms.get(rank=1),
            first_day=day,
            last_day=day,
            evidence="x",
            actor=kr_editor,
        )


def test_the_admin_records_an_outage_and_another_person_decides(client, canonical_content, lead):
    reporter, decider = kr_staff("kr-reporter", lead), kr_staff("kr-decider", lead)
    primary = kr_registration().platforms.get(rank=1)
    client.force_login(reporter)
    form = client.get("/admin/markets/platformoutage/add/")
    assert "KR · email-calendar · 1." in form.text
    client.post(
        "/admin/markets/platformoutage/add/",
        {
            "platform": primary.pk,
            "first_day": "2026-12-01",
            "last_day": "2026-12-02",
            "evidence": "https://status.example/",
        },
    )
    outage = PlatformOutage.objects.get()
    assert outage.reported_by == reporter
    change = f"/admin/markets/platformoutage/{outage.pk}/change/"
    events = {"events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0"}
    refused = client.post(change, {"decision": "accept", "reason": "Mine.", **events}, follow=True)
    assert "Nobody decides on an outage they reported" in refused.text
    client.force_login(decider)
    client.post(change, {"decision": "accept", "reason": "Status page agrees.", **events})
    outage.refresh_from_db()
    assert outage.state == OutageState.ACCEPTED


def test_a_second_set_beside_the_one_in_force_is_never_frozen(canonical_content, lead):
    """A set in force changes only through a replacement that says why."""
    registration = kr_registration()
    second = PlatformRegistration.objects.create(
        market_edition=registration.market_edition, task_family=registration.task_family
    )
    platform = registration.platforms.get(rank=1)
    platform.pk = platform.id = None
    platform.registration = second
    platform.save()
    with pytest.raises(InvalidTransition):
        platform_registration_register(registration_id=second.pk, actor=lead)
