from django.db.models import Exists, OuterRef

from mica.methodology.models import ChapterItem
from submissions.models import (
    PUBLIC_CHALLENGE_STATES,
    Challenge,
    ChallengeState,
    DataStatus,
    System,
)

# Challenges waiting for an answer on their claim: made public, not yet decided.
OPEN_CHALLENGE_STATES = [ChallengeState.SCREENED, ChallengeState.TRIAGED]


def challenge_public_list():
    """Challenges the public may see: screened and later. A received one stays private."""
    return (
        Challenge.objects.filter(state__in=PUBLIC_CHALLENGE_STATES)
        .select_related("edition")
        .prefetch_related("events")
        .order_by("-received_at")
    )


def challenge_public_get(pk):
    return challenge_public_list().get(pk=pk)


def challenges_on_section(edition, section_id):
    return challenge_public_list().filter(edition=edition, section_id=section_id)


def open_challenges(edition):
    """Screened or triaged challenges of an edition: their claims show "under challenge"."""
    return Challenge.objects.filter(edition=edition, state__in=OPEN_CHALLENGE_STATES)


def challenges_on_claims_of(user):
    """Open challenges (screened or triaged) to claims `user` owns, in the challenged edition."""
    owned = ChapterItem.objects.filter(
        owner=user, edition=OuterRef("edition"), section_id=OuterRef("section_id")
    )
    return Challenge.objects.filter(Exists(owned), state__in=OPEN_CHALLENGE_STATES)


def challenges_on_unowned_claims():
    """Open challenges to a section nobody owns (a claim without an owner, or a section
    that has none): the method lead's to answer, so none waits unseen."""
    owned = ChapterItem.objects.filter(
        owner__isnull=False, edition=OuterRef("edition"), section_id=OuterRef("section_id")
    )
    return Challenge.objects.filter(~Exists(owned), state__in=OPEN_CHALLENGE_STATES)


def submission_figures(edition):
    """Systems with an official snapshot; demo and preview systems are never registered."""
    registered = System.objects.filter(snapshots__data_status=DataStatus.OFFICIAL)
    return {"registered_system_count": registered.distinct().count()}
