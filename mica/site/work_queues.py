"""The admin index's work queues: for each role a person holds, what waits for them.

The counts come from each app's selectors; a person without the holdout capability is
counted nothing of a holdout task, since those selectors start from what they may see.
The queries are a fixed number whatever the queues hold.
"""

from dataclasses import dataclass

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from catalogue.selectors import DECIDING_ROLES, review_queue_counts
from governance.selectors import appeals_awaiting_decision
from markets.models import CompetenceRole
from markets.selectors import competent_roles
from mica.methodology.selectors import claims_korean_stale
from submissions.selectors import challenges_on_claims_of, challenges_on_unowned_claims

AUTHORING_ROLES = {CompetenceRole.AUTHOR, CompetenceRole.LEAD}


@dataclass(frozen=True)
class WorkQueue:
    label: str
    count: int
    url: str


def _review_queues(user):
    if not user.has_perm("catalogue.view_localreview"):
        return []
    roles = set(CompetenceRole) if user.is_superuser else competent_roles(user)
    if not roles:
        return []
    counts = review_queue_counts(user)
    reviews = reverse("admin:catalogue_localreview_changelist")
    queues = []
    if roles & set(DECIDING_ROLES):
        queues.append(
            WorkQueue(_("Awaiting my review"), counts["awaiting"], f"{reviews}?mine=review")
        )
    if roles & AUTHORING_ROLES:
        queues.append(
            WorkQueue(
                _("My drafts and reviews sent back"), counts["drafts"], f"{reviews}?mine=drafts"
            )
        )
    return queues


def _challenge_queue(user):
    if not user.has_perm("submissions.view_challenge"):
        return []
    challenges = reverse("admin:submissions_challenge_changelist")
    queues = [
        WorkQueue(
            _("Challenges on claims I own"),
            challenges_on_claims_of(user).count(),
            f"{challenges}?mine=owned",
        )
    ]
    if user.is_superuser:  # the method lead answers for the claims nobody owns
        queues.append(
            WorkQueue(
                _("Challenges on claims without an owner"),
                challenges_on_unowned_claims().count(),
                f"{challenges}?mine=unowned",
            )
        )
    return queues


def _appeal_queue(user):
    if not user.has_perm("governance.change_appeal"):
        return []
    appeals = reverse("admin:governance_appeal_changelist")
    return [
        WorkQueue(
            _("Appeals awaiting a decision"),
            appeals_awaiting_decision().count(),
            f"{appeals}?state__exact=received",
        )
    ]


def _translation_queue(user):
    if not user.has_perm("methodology.change_chapteritem"):
        return []
    claims = reverse("admin:methodology_chapteritem_changelist")
    return [
        WorkQueue(
            _("Stale Korean translations"), len(claims_korean_stale()), f"{claims}?korean=stale"
        )
    ]


def work_queues(user):
    """The queues `user` works in, each with how many items wait and where to work them."""
    if not (user.is_authenticated and user.is_staff):
        return []
    return (
        _review_queues(user)
        + _challenge_queue(user)
        + _appeal_queue(user)
        + _translation_queue(user)
    )
