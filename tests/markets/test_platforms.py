"""A pre-registered platform set is frozen; only a reasoned new registration replaces it."""

import pytest
from django.core.management import call_command

from markets.models import PlatformRegistration, RegistrationStatus
from markets.services import (
    platform_registration_register,
    platform_registration_supersede,
    require_platforms_editable,
)
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed

pytestmark = pytest.mark.django_db


def kr_registration():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family="email-calendar"
    )


def platform_fields(platform):
    return {
        "name_en": platform.name_en,
        "name_ko": platform.name_ko,
        "native_name": platform.native_name,
        "kind": platform.kind,
        "snapshot_date": platform.snapshot_date,
        "local_reach_en": platform.local_reach_en,
        "local_reach_ko": platform.local_reach_ko,
        "availability_en": platform.availability_en,
        "availability_ko": platform.availability_ko,
        "relevance_en": platform.relevance_en,
        "relevance_ko": platform.relevance_ko,
        "source": platform.source,
        "source_accessed": platform.source_accessed,
    }


def test_loaded_sets_are_drafts_until_pre_registered(canonical_content, lead):
    registration = kr_registration()
    assert registration.status == RegistrationStatus.DRAFT
    require_platforms_editable(registration)
    registered = platform_registration_register(registration_id=registration.pk, actor=lead)
    assert registered.status == RegistrationStatus.REGISTERED and registered.registered_at
    with pytest.raises(ValidationFailed):
        require_platforms_editable(registered)
    with pytest.raises(InvalidTransition):
        platform_registration_register(registration_id=registration.pk, actor=lead)


def test_a_content_reload_never_rewrites_a_frozen_set(canonical_content, lead):
    registration = kr_registration()
    platform_registration_register(registration_id=registration.pk, actor=lead)
    platform = registration.platforms.get(rank=1)
    platform.name_en = "Edited after registration"
    platform.save()
    call_command("load_canonical_content", "markets", stdout=open("/dev/null", "w"))
    assert registration.platforms.get(rank=1).name_en == "Edited after registration"


def test_superseding_needs_a_reason_in_both_languages(canonical_content, lead):
    registration = kr_registration()
    platform_registration_register(registration_id=registration.pk, actor=lead)
    platforms = [platform_fields(p) for p in registration.platforms.all()]
    with pytest.raises(ValidationFailed):
        platform_registration_supersede(
            registration_id=registration.pk,
            reason_en="Gone",
            reason_ko="",
            platforms=platforms,
            actor=lead,
        )
    new = platform_registration_supersede(
        registration_id=registration.pk,
        reason_en="The primary service closed its mail app.",
        reason_ko="주 서비스가 메일 앱을 종료했습니다.",
        platforms=list(reversed(platforms)),
        actor=lead,
    )
    registration.refresh_from_db()
    assert registration.status == RegistrationStatus.SUPERSEDED
    assert new.supersedes == registration and new.status == RegistrationStatus.REGISTERED
    assert new.platforms.get(rank=1).name_en == platforms[-1]["name_en"]


def test_a_draft_cannot_be_superseded(canonical_content, lead):
    registration = kr_registration()
    with pytest.raises(InvalidTransition):
        platform_registration_supersede(
            registration_id=registration.pk,
            reason_en="x",
            reason_ko="y",
            platforms=[{}],
            actor=lead,
        )


def test_registering_needs_competence_for_the_market(canonical_content, kr_editor):
    jp = PlatformRegistration.objects.get(
        market_edition__market__code="JP", task_family="email-calendar"
    )
    with pytest.raises(PermissionRefused):
        platform_registration_register(registration_id=jp.pk, actor=kr_editor)
    platform_registration_register(registration_id=kr_registration().pk, actor=kr_editor)


def test_admin_shows_a_frozen_set_read_only(client, canonical_content, lead):
    registration = kr_registration()
    client.force_login(lead)
    editable = client.get(f"/admin/markets/platformregistration/{registration.pk}/change/")
    assert 'name="platforms-0-name_en"' in editable.text
    response = client.post(
        "/admin/markets/platformregistration/",
        {"action": "pre_register", "_selected_action": [registration.pk]},
    )
    assert response.status_code == 302
    frozen = client.get(f"/admin/markets/platformregistration/{registration.pk}/change/")
    assert 'name="platforms-0-name_en"' not in frozen.text
