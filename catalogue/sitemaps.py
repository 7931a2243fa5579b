from django.urls import reverse

from catalogue.selectors import task_public_list
from mica.sitemaps import BilingualSitemap


class TaskSitemap(BilingualSitemap):
    """Public task pages only: the sitemap reads the same public queryset as the pages."""

    priority = 0.5

    def items(self):
        return list(task_public_list().values_list("slug", flat=True))

    def location(self, slug):
        return reverse("catalogue:task-detail", args=[slug])
