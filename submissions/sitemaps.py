from django.urls import reverse

from mica.sitemaps import BilingualSitemap


class GuideSitemap(BilingualSitemap):
    """The guides of the submit pages that no navigation entry lists."""

    def items(self):
        return ["submissions:operator-guide"]

    def location(self, item):
        return reverse(item)
