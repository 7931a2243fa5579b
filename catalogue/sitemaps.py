from math import ceil

from django.urls import reverse

from catalogue.selectors import task_catalogue_list
from catalogue.views import PAGE_PARAMETER, catalogue_page_size
from mica.sitemaps import BilingualSitemap


class TaskSitemap(BilingualSitemap):
    """The public catalogue's task pages: the sitemap reads the queryset the catalogue lists."""

    priority = 0.5

    def items(self):
        return list(task_catalogue_list().values_list("slug", flat=True))

    def location(self, slug):
        return reverse("catalogue:task-detail", args=[slug])


class TaskListPageSitemap(BilingualSitemap):
    """The catalogue's later pages (`/tasks/?page=2` on): the first is `/tasks/` itself,
    among the routed pages. The bake bakes every location of the sitemap, so each page
    of the listing is baked."""

    priority = 0.5

    def items(self):
        pages = ceil(task_catalogue_list().count() / catalogue_page_size())
        return list(range(2, pages + 1))

    def location(self, number):
        return f"{reverse('catalogue:task-list')}?{PAGE_PARAMETER}={number}"
