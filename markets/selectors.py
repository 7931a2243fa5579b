from django.db.models import Prefetch
from django.utils import timezone
from django.utils.translation import gettext

from markets.models import (
    IntegrationSituation,
    Market,
    MarketCompetence,
    MarketEdition,
    PlatformRegistration,
    RegistrationStatus,
    RepresentativePlatform,
)
from mica.methodology.selectors import edition_current


def market_list():
    """The markets in the method's one order: KR, JP, SG, TW, AE, TH."""
    return Market.objects.order_by("display_order")


def market_get(code):
    return market_list().get(code=code.upper())


def market_edition_list(edition=None):
    """Market editions of an edition (the current one by default), with everything they hold."""
    edition = edition or edition_current()
    live_registrations = PlatformRegistration.objects.exclude(
        status=RegistrationStatus.SUPERSEDED
    ).prefetch_related(
        Prefetch("platforms", queryset=RepresentativePlatform.objects.order_by("rank"))
    )
    return (
        MarketEdition.objects.filter(edition=edition)
        .select_related("market", "edition", "datasheet", "data_statement")
        .prefetch_related(
            "hazards",
            "local_changes",
            Prefetch(
                "situations", queryset=IntegrationSituation.objects.order_by("position", "pk")
            ),
            Prefetch("platform_registrations", queryset=live_registrations),
        )
        .order_by("market__display_order")
    )


def market_codes(edition):
    """The codes of the markets an edition declares, in display order (one light query)."""
    return list(
        MarketEdition.objects.filter(edition=edition)
        .order_by("market__display_order")
        .values_list("market__code", flat=True)
    )


def market_edition_get(code, edition=None):
    return market_edition_list(edition).get(market__code=code.upper())


def competent_market_codes(user, *, roles=None):
    """Codes of the markets where the user holds a competence valid today."""
    if not user.is_authenticated:
        return set()
    competences = MarketCompetence.objects.filter(user=user, valid_until__gte=timezone.localdate())
    if roles:
        competences = competences.filter(role__in=roles)
    return set(competences.values_list("market__code", flat=True))


def situation_index(edition=None):
    """market code -> set of situation ids declared in the edition."""
    edition = edition or edition_current()
    index = {}
    rows = IntegrationSituation.objects.filter(market_edition__edition=edition).values_list(
        "market_edition__market__code", "situation_id"
    )
    for code, situation_id in rows:
        index.setdefault(code, set()).add(situation_id)
    return index


def market_figures(edition):
    """The live figures the markets give an edition's prose."""
    codes = market_codes(edition)
    return {"market_count": len(codes), "market_codes": ", ".join(codes)}


def market_editions_frozen(edition):
    """What publishing the edition freezes of the markets."""
    return (gettext("market editions"), len(market_codes(edition)))
