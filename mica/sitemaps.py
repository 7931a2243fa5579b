from django.contrib.sitemaps import Sitemap

from mica.bilingual import LANGUAGES


class BilingualSitemap(Sitemap):
    """Every location in English and Korean, with hreflang alternates and x-default."""

    i18n = True
    languages = list(LANGUAGES)
    alternates = True
    x_default = True
    changefreq = "monthly"
