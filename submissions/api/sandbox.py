"""The sandbox the API reference's console sends to: the world the schema's examples tell
of, staged for one call inside its transaction and rolled back with everything the call
wrote. On a fresh install, then, every documented example gets its documented answer,
and trying the API records nothing on any snapshot.

The story (submissions.api.examples): Harbor Agent 2026.11 was accepted and is the
caller's to record on; it recorded one attempt before (harbor-kr-0000); another
operator's agent exists; and beside KR's shipped e-mail and calendar platform set
(pre-registered 2026-11-30) stand a set superseded on 2026-11-30 that named "Hanmail
Classic" and a draft replacement that names "Naver Calendar Beta".
"""

import datetime as dt

from django.contrib.auth import get_user_model

from markets.models import PlatformRegistration, RegistrationStatus
from mica.errors import DomainError
from submissions.api.examples import (
    ANOTHER_SNAPSHOT,
    EARLIER_ATTEMPT,
    SNAPSHOT,
    SYSTEM_SUBMISSION,
)
from submissions.ingest import attempts_ingest_batch
from submissions.models import DataStatus, System, SystemSnapshot, Track

SUPERSEDED_ON = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


def examples_story(actor):
    """Stage the examples' world for `actor` (inside the caller's transaction, which the
    caller rolls back): what already exists is used as it is."""
    _snapshot(SNAPSHOT, SYSTEM_SUBMISSION["name"], actor)
    _snapshot(ANOTHER_SNAPSHOT, "Another Operator's Agent", _another_operator())
    platform_sets_of_the_examples()
    try:
        attempts_ingest_batch(payloads=[EARLIER_ATTEMPT], actor=actor)
    except DomainError:
        # A world that already holds the id otherwise answers as that world would.
        pass


def _snapshot(named, name, operator):
    system, _created = System.objects.get_or_create(
        slug=named["system"], defaults={"name": name, "operator": name}
    )
    System.objects.filter(pk=system.pk).update(operator_account=operator)
    SystemSnapshot.objects.get_or_create(
        system=system,
        version=named["version"],
        defaults={
            "snapshot_date": SYSTEM_SUBMISSION["snapshot_date"],
            "orchestrator": SYSTEM_SUBMISSION["orchestrator"],
            "routable_models": SYSTEM_SUBMISSION["routable_models"],
            "tools": SYSTEM_SUBMISSION["tools"],
            "memory": SYSTEM_SUBMISSION["memory"],
            "market_capability": SYSTEM_SUBMISSION["market_capability"],
            "track": Track.SIMULATOR,
            "data_status": DataStatus.OFFICIAL,
        },
    )


def _another_operator():
    user, _created = get_user_model().objects.get_or_create(
        username="another-operator", defaults={"is_active": False}
    )
    return user


def platform_sets_of_the_examples():
    """(older, draft): the superseded and the draft sets the platform refusals name,
    beside KR's e-mail and calendar set in force; None when no set is in force there."""
    in_force = PlatformRegistration.objects.filter(
        market_edition__market__code="KR",
        task_family="email-calendar",
        status=RegistrationStatus.REGISTERED,
    ).first()
    if in_force is None:
        return None
    older = _set_beside(in_force, "Hanmail Classic", status=RegistrationStatus.SUPERSEDED)
    PlatformRegistration.objects.filter(pk=older.pk).update(registered_at=SUPERSEDED_ON)
    draft = _set_beside(
        in_force,
        "Naver Calendar Beta",
        supersedes=in_force,
        supersede_reason_en="The calendar moves to its own app.",
        supersede_reason_ko="캘린더가 별도 앱으로 옮겨 갑니다.",
    )
    return older, draft


def _set_beside(registration, name, **fields):
    """A set of the same market edition and family whose primary is `name`."""
    other = PlatformRegistration.objects.create(
        market_edition=registration.market_edition,
        task_family=registration.task_family,
        registered_at=registration.registered_at,
        **fields,
    )
    platform = registration.platforms.get(rank=1)
    platform.pk = platform.id = None
    platform.registration = other
    platform.name_en = platform.name_ko = platform.native_name = name
    platform.save()
    return other
