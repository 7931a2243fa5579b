from submissions.models import (
    PUBLIC_CHALLENGE_STATES,
    Challenge,
    ChallengeState,
    DataStatus,
    System,
)


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
    return Challenge.objects.filter(
        edition=edition, state__in=[ChallengeState.SCREENED, ChallengeState.TRIAGED]
    )


def submission_figures(edition):
    """Systems with an official snapshot; demo and preview systems are never registered."""
    registered = System.objects.filter(snapshots__data_status=DataStatus.OFFICIAL)
    return {"registered_system_count": registered.distinct().count()}
