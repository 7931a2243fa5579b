from django.db.models import Count, OuterRef, Prefetch, Q, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext

from markets.models import (
    LIVE_REGISTRATION,
    Hazard,
    IntegrationSituation,
    LocalChange,
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


def _counted(model, field="pk", only=None):
    """A count of the market edition's rows of ``model``, as a subquery."""
    rows = (
        model.objects.filter(only or Q(), market_edition=OuterRef("pk"))
        .order_by()
        .values("market_edition")
        .annotate(n=Count(field, distinct=True))
        .values("n")
    )
    return Coalesce(Subquery(rows), 0)


def datasheet_figures():
    """The records a datasheet's prose counts ("Four hazards, … five declared integration
    situations"), as ``figure_<name>`` annotations; the texts name them as ``{{name}}``."""
    return {
        "figure_hazards": _counted(Hazard),
        "figure_local_changes": _counted(LocalChange),
        "figure_situations": _counted(IntegrationSituation),
        "figure_families": _counted(
            PlatformRegistration,
            "task_family",
            LIVE_REGISTRATION,
        ),
    }


def market_edition_list(edition=None):
    """Market editions of an edition (the current one by default), with everything they hold."""
    edition = edition or edition_current()
    live_registrations = PlatformRegistration.objects.filter(LIVE_REGISTRATION).prefetch_related(
        Prefetch("platforms", queryset=RepresentativePlatform.objects.order_by("rank"))
    )
    return (
        MarketEdition.objects.filter(edition=edition)
        .select_related("market", "edition", "datasheet", "data_statement")
        .annotate(**datasheet_figures())
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


def competent_roles(user):
    """The roles (author, reviewer, lead) the user holds a competence valid today in."""
    if not user.is_authenticated:
        return set()
    competences = MarketCompetence.objects.filter(user=user, valid_until__gte=timezone.localdate())
    return set(competences.values_list("role", flat=True))


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
    figures = {"market_count": len(codes), "market_codes": ", ".join(codes)}
    # The profile minimums as the coverage audit reads them (`/markets/` says "4 of 5
    # required"), so the prose and the audit never state two different numbers.
    from markets import services  # services builds on these selectors

    for key, _label, _choices, required in services.COVERAGE_DIMENSIONS:
        figures[f"min_{key}"] = required
    return figures


def market_editions_frozen(edition):
    """What publishing the edition freezes of the markets."""
    return (gettext("market editions"), len(market_codes(edition)))


def platforms_in_force(edition=None):
    """The platforms of the pre-registered sets in force in an edition (the current one by
    default), primary first: what a run in each market and family uses."""
    edition = edition or edition_current()
    return (
        RepresentativePlatform.objects.filter(
            registration__market_edition__edition=edition,
            registration__status=RegistrationStatus.REGISTERED,
        )
        .select_related("registration__market_edition__market")
        .order_by("registration__market_edition__market__display_order", "rank")
    )


def platform_primary(market_code, family, edition=None):
    """The primary platform a run of `family` in the market uses, or None when no set is
    pre-registered for it."""
    return (
        platforms_in_force(edition)
        .filter(
            registration__market_edition__market__code=market_code,
            registration__task_family=family,
            rank=1,
        )
        .first()
    )
