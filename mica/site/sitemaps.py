from django.urls import reverse

from catalogue.sitemaps import TaskListPageSitemap, TaskSitemap
from markets.sitemaps import MarketSitemap
from mica.site.navigation import routed_pages
from mica.sitemaps import BilingualSitemap
from submissions.sitemaps import GuideSitemap


class PageSitemap(BilingualSitemap):
    """Every routed page of the index, in both languages with alternates."""

    def items(self):
        return [entry["url_name"] for entry in routed_pages("")]

    def location(self, item):
        return reverse(item)

    def priority(self, item):
        return 1.0 if item == "site:home" else 0.7


# The site composes every app's sitemap; detail pages of public records only.
SITEMAPS = {
    "pages": PageSitemap,
    "guides": GuideSitemap,
    "markets": MarketSitemap,
    "tasks": TaskSitemap,
    "task-list-pages": TaskListPageSitemap,
}
