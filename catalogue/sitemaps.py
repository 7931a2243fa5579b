from math import ceil

from django.urls import reverse
from django.utils.translation import get_language

from catalogue.selectors import task_catalogue_list
from catalogue.views import PAGE_PARAMETER, catalogue_page_size
from mica.sitemaps import BilingualSitemap

# Stands for each task's slug in its address (reversed once, then replaced).
PLACEHOLDER = "placeholder-task"


class TaskSitemap(BilingualSitemap):
    """The public catalogue's task pages: the sitemap reads the queryset the catalogue lists."""

    priority = 0.5

    def items(self):
        return list(task_catalogue_list().values_list("slug", flat=True))

    def location(self, slug):
        # Reversed once a language, not once a task: the bake reads twenty thousand.
        addresses = self.__dict__.setdefault("_addresses", {})
        language = get_language()
        if language not in addresses:
            addresses[language] = reverse("catalogue:task-detail", args=[PLACEHOLDER])
        return addresses[language].replace(PLACEHOLDER, slug)


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
