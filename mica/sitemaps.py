from django.conf import settings
from django.contrib.sitemaps import Sitemap

from mica.bilingual import LANGUAGES


class BilingualSitemap(Sitemap):
    """Every location in English and Korean, with hreflang alternates and x-default."""

    i18n = True
    languages = list(LANGUAGES)
    alternates = True
    x_default = True
    changefreq = "monthly"

    def get_urls(self, page=1, site=None, protocol=None):
        # Locations name the configured site, never the Host header of the request.
        scheme, _, domain = settings.SITE_URL.partition("://")
        return self._urls(page, scheme, domain)
