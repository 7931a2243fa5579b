"""The sandbox the API reference's console sends to: the world the schema's examples tell
of, staged for one call inside its transaction and rolled back with everything the call
wrote. On a fresh install, then, every documented example gets its documented answer,
and trying the API records nothing on any snapshot.

The story (submissions.api.examples): Harbor Agent 2026.11 was accepted and is the
caller's to record on; it recorded one attempt before (harbor-kr-0000); another
operator's agent exists; and beside KR's shipped e-mail and calendar platform set
(pre-registered 2026-11-30) stand a set superseded on 2026-11-30 that named "Hanmail
Classic" and a draft replacement that names "Naver Calendar Beta".

The story's systems are the sandbox's own (SandboxWorld): made inside the call under
names no other call or real system has, and shown in the answer under the names the
examples use. A real system of the same name (the demo's harbor-agent, say) is never
lent to the caller, so the sandbox confirms nothing about its attempts, and two calls
never wait for each other's rows.
"""

import datetime as dt
import secrets

from django.contrib.auth import get_user_model

from markets.models import PlatformRegistration, RegistrationStatus
from mica.errors import DomainError
from mica.methodology.selectors import edition_current
from submissions.api.examples import (
    ANOTHER_SNAPSHOT,
    EARLIER_ATTEMPT,
    SNAPSHOT,
    SYSTEM_SUBMISSION,
)
from submissions.ingest import attempts_ingest_batch
from submissions.models import DataStatus, System, SystemSnapshot, Track

SUPERSEDED_ON = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)


class SandboxWorld:
    """The examples' systems under names of this call's own: `hidden` renames them in what
    the caller sent, `shown` names them back in the answer."""

    def __init__(self, prefix=None):
        # An empty prefix is the story told with its own names (a test staging it for real).
        self.prefix = f"sandbox-{secrets.token_hex(6)}-" if prefix is None else prefix
        self.names = {named["system"] for named in (SNAPSHOT, ANOTHER_SNAPSHOT)}

    def own(self, slug):
        return f"{self.prefix}{slug}"

    def hidden(self, data):
        """The payloads with each snapshot of the story's systems renamed; any other
        system is looked up as a real call would, and refused as one would be."""
        if isinstance(data, list):
            return [self.hidden(item) for item in data]
        if not isinstance(data, dict):
            return data
        renamed = {key: self.hidden(value) for key, value in data.items()}
        snapshot = data.get("snapshot")
        if isinstance(snapshot, dict) and snapshot.get("system") in self.names:
            renamed["snapshot"] = {**snapshot, "system": self.own(snapshot["system"])}
        return renamed

    def shown(self, data):
        if isinstance(data, list):
            return [self.shown(item) for item in data]
        if isinstance(data, dict):
            return {key: self.shown(value) for key, value in data.items()}
        if isinstance(data, str):
            return data.replace(self.prefix, "")
        return data


def examples_story(actor, world=None):
    """Stage the examples' world for `actor` (inside the caller's transaction, which the
    caller rolls back), its systems under `world`'s names; what exists is used as it is,
    and never handed to another operator."""
    world = world or SandboxWorld(prefix="")
    _snapshot(world, SNAPSHOT, SYSTEM_SUBMISSION["name"], actor)
    another = _another_operator(world)
    _snapshot(world, ANOTHER_SNAPSHOT, "Another Operator's Agent", another)
    platform_sets_of_the_examples()
    try:
        attempts_ingest_batch(payloads=[world.hidden(EARLIER_ATTEMPT)], actor=actor)
    except DomainError:
        # A world that already holds the id otherwise answers as that world would.
        pass


def _snapshot(world, named, name, operator):
    system, _created = System.objects.get_or_create(
        slug=world.own(named["system"]),
        defaults={"name": name, "operator": name, "operator_account": operator},
    )
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


def _another_operator(world):
    user, _created = get_user_model().objects.get_or_create(
        username=world.own("another-operator"), defaults={"is_active": False}
    )
    return user


def platform_sets_of_the_examples():
    """(older, draft): the superseded and the draft sets the platform refusals name,
    beside KR's e-mail and calendar set in force; None when no set is in force there."""
    # The set of the edition ingestion judges by: after a publication, older editions
    # keep sets of their own, and a story staged beside one of those names no platform
    # of the current edition.
    in_force = PlatformRegistration.objects.filter(
        market_edition__edition=edition_current(),
        market_edition__market__code="KR",
        task_family="email-calendar",
        status=RegistrationStatus.REGISTERED,
    ).first()
    if in_force is None:
        return None
    older = _set_beside(in_force, "Hanmail Classic", status=RegistrationStatus.SUPERSEDED)
    PlatformRegistration.objects.filter(pk=older.pk).update(registered_at=SUPERSEDED_ON)
    # One draft a family: a replacement someone already drafts is the story's draft.
    draft = PlatformRegistration.objects.filter(
        market_edition=in_force.market_edition,
        task_family=in_force.task_family,
        status=RegistrationStatus.DRAFT,
    ).first() or _set_beside(
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
