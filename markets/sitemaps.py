from django.contrib.sitemaps import Sitemap
from django.urls import reverse

from markets.selectors import market_list


class MarketSitemap(Sitemap):
    """The six market pages, in both languages with alternates."""

    i18n = True
    languages = ["en", "ko"]
    alternates = True
    x_default = True
    changefreq = "monthly"
    priority = 0.7

    def items(self):
        return list(market_list().values_list("code", flat=True))

    def location(self, code):
        return reverse("markets:market-detail", args=[code.lower()])
