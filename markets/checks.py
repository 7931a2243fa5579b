from django.core.checks import Error, register
from django.db import DatabaseError

from markets.selectors import market_edition_list, market_list
from markets.services import coverage_audit
from mica.methodology.models import Edition, EditionStatus


@register("mica")
def published_market_editions_meet_the_minimums(app_configs, **kwargs):
    """A published edition whose market profiles have a gap fails `manage.py check`."""
    try:
        editions = list(Edition.objects.filter(status=EditionStatus.PUBLISHED))
        codes = [m.code for m in market_list()]
    except DatabaseError:
        return []  # before the first migration there is nothing to check
    problems = []
    for edition in editions:
        declared = {me.market.code: me for me in market_edition_list(edition)}
        for code in codes:
            market_edition = declared.get(code)
            if market_edition is None:
                problems.append(
                    Error(f"{edition}: {code} has no market profile.", id="markets.E001")
                )
                continue
            for gap in coverage_audit(market_edition.situations.all()).gaps:
                problems.append(Error(f"{edition}: {code} {gap}", id="markets.E002"))
    return problems
