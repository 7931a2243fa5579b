from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CatalogueConfig(AppConfig):
    name = "catalogue"
    verbose_name = _("Task catalogue")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from catalogue.selectors import catalogue_figures, catalogue_frozen, task_catalogue_snapshot
        from mica.methodology import extensions

        extensions.live_figures_register(catalogue_figures)
        extensions.frozen_count_register(catalogue_frozen)
        extensions.catalogue_register(task_catalogue_snapshot)
