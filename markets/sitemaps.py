from django.urls import reverse

from markets.selectors import market_list
from mica.sitemaps import BilingualSitemap


class MarketSitemap(BilingualSitemap):
    """The six market pages, in both languages with alternates."""

    priority = 0.7

    def items(self):
        return list(market_list().values_list("code", flat=True))

    def location(self, code):
        return reverse("markets:market-detail", args=[code.lower()])
