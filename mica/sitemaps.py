from django.contrib.sitemaps import Sitemap


class BilingualSitemap(Sitemap):
    """Every location in English and Korean, with hreflang alternates and x-default."""

    i18n = True
    languages = ["en", "ko"]
    alternates = True
    x_default = True
    changefreq = "monthly"
