from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MarketsConfig(AppConfig):
    name = "markets"
    verbose_name = _("Markets")

    def ready(self):
        from markets import checks  # noqa: F401  (registers the coverage check)
