from django.contrib.sitemaps import Sitemap
from django.urls import reverse

from catalogue.selectors import task_public_list


class TaskSitemap(Sitemap):
    """Public task pages only: the sitemap reads the same public queryset as the pages."""

    i18n = True
    languages = ["en", "ko"]
    alternates = True
    x_default = True
    changefreq = "monthly"
    priority = 0.5

    def items(self):
        return list(task_public_list().values_list("slug", flat=True))

    def location(self, slug):
        return reverse("catalogue:task-detail", args=[slug])
