from django.urls import reverse

from catalogue.selectors import task_catalogue_list
from mica.sitemaps import BilingualSitemap


class TaskSitemap(BilingualSitemap):
    """The public catalogue's task pages: the sitemap reads the queryset the catalogue lists."""

    priority = 0.5

    def items(self):
        return list(task_catalogue_list().values_list("slug", flat=True))

    def location(self, slug):
        return reverse("catalogue:task-detail", args=[slug])
