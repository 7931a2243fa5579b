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
        self._task_rows_register()

    def _task_rows_register(self):
        """The rows of the task tables belong to one task's page each (mica.content.rows):
        a bake after a task edit renders that task's pages, not every task page."""
        from catalogue import models
        from catalogue.selectors import task_slug_of
        from mica.content.rows import row_scope_register

        def by_version(row):
            return task_slug_of(version_id=row.version_id)

        row_scope_register(models.TaskDefinition, "task", lambda task: task.slug)
        row_scope_register(
            models.TaskVersion, "task", lambda row: task_slug_of(definition_id=row.definition_id)
        )
        row_scope_register(
            models.ExposureEntry, "task", lambda row: task_slug_of(definition_id=row.definition_id)
        )
        for model in (models.ContractClause, models.MarketApplicability, models.LocalReview):
            row_scope_register(model, "task", by_version)
