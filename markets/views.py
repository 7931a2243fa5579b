from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from markets import presenters
from markets.models import MarketEdition
from markets.selectors import market_edition_get, market_edition_list
from mica.vocabulary import DiagnosticAxis, LocalityCondition, label_for


@require_safe
def market_list(request):
    rows = [presenters.market_row(me) for me in market_edition_list()]
    return render(
        request,
        "markets/market_list.html",
        {
            "rows": rows,
            "matrix": presenters.coverage_matrix(rows),
        },
    )


@require_safe
def market_detail(request, code):
    try:
        market_edition = market_edition_get(code)
    except MarketEdition.DoesNotExist as missing:
        raise Http404 from missing
    situations = list(market_edition.situations.all())
    return render(
        request,
        "markets/market_detail.html",
        {
            "market_edition": market_edition,
            "market": market_edition.market,
            "hazards": [
                {"record": h, "axis": label_for(DiagnosticAxis, h.diagnostic_axis)}
                for h in market_edition.hazards.all()
            ],
            "local_changes": [
                {"record": c, "condition": label_for(LocalityCondition, c.locality_condition)}
                for c in market_edition.local_changes.all()
            ],
            "situations": [presenters.situation_view(s) for s in situations],
            "sheet": presenters.datasheet_view(market_edition),
            "audit": presenters.coverage_audit(situations),
            "platform_groups": presenters.platform_groups(market_edition),
        },
    )
