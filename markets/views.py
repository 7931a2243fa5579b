from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from markets import presenters
from markets.models import MarketEdition
from markets.selectors import market_edition_get, market_edition_list
from mica.content.fragments import computed, fragment_rendered
from mica.vocabulary import DiagnosticAxis, LocalityCondition, label_for

DETAIL_TEMPLATE = "markets/_market_detail.html"


@require_safe
def market_list(request):
    body = fragment_rendered("markets/_market_list.html", _market_list_context)
    return render(request, "markets/market_list.html", {"body": body})


def _market_list_context():
    rows = [presenters.market_row(me) for me in market_edition_list()]
    return {"rows": rows, "matrix": presenters.coverage_matrix(rows)}


@require_safe
def market_detail(request, code):
    market, body = computed(
        "markets-market-detail",
        lambda: _market_detail(code),
        code,
    )
    return render(request, "markets/market_detail.html", {"market": market, "body": body})


def _market_detail(code):
    """The market (its name titles the page) and the page's body as HTML."""
    try:
        market_edition = market_edition_get(code)
    except MarketEdition.DoesNotExist as missing:
        raise Http404 from missing
    context = _market_detail_context(market_edition)
    body = render_to_string(DETAIL_TEMPLATE, context)
    return market_edition.market, mark_safe(body)


def _market_detail_context(market_edition):
    situations = list(market_edition.situations.all())
    return {
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
    }
