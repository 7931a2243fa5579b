from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CatalogueConfig(AppConfig):
    name = "catalogue"
    verbose_name = _("Task catalogue")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from catalogue.selectors import catalogue_figures, catalogue_frozen, task_catalogue_snapshot
        from catalogue.services import task_versions_freeze
        from mica.methodology import extensions

        extensions.live_figures_register(catalogue_figures)
        extensions.frozen_count_register(catalogue_frozen)
        extensions.catalogue_register(task_catalogue_snapshot)
        extensions.catalogue_freeze_register(task_versions_freeze)
        self._task_rows_register()
        self._frozen_rows_register()
        self._holdout_commitments_register()

    def _holdout_commitments_register(self):
        """Each published edition commits to the holdout; a task leaving it (retired or
        made public, through a save of the task) reveals its salt (catalogue.commitments)."""
        from django.db.models.signals import post_save, pre_save

        from catalogue.commitments import holdout_commit, holdout_left_note, holdout_left_reveal
        from catalogue.models import TaskDefinition
        from mica.methodology import extensions

        extensions.edition_commitments_register(holdout_commit)
        pre_save.connect(holdout_left_note, sender=TaskDefinition, dispatch_uid="holdout-left")
        post_save.connect(
            holdout_left_reveal, sender=TaskDefinition, dispatch_uid="holdout-revealed"
        )

    def _frozen_rows_register(self):
        """A frozen version's row and its parts are fixed in the database too."""
        from mica.frozen_rows import (
            FrozenRows,
            frozen_rows_register,
            frozen_triggers_after_migrate,
        )

        frozen_rows_register(
            FrozenRows(
                table="catalogue_taskversion",
                frozen="{row}.frozen_at IS NOT NULL",
                what="a validated or published task version",
                children=(
                    ("catalogue_contractclause", "version_id"),
                    ("catalogue_marketapplicability", "version_id"),
                ),
            )
        )
        post_migrate.connect(frozen_triggers_after_migrate, sender=self, dispatch_uid="frozen-rows")

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
