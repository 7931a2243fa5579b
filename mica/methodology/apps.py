from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MethodologyConfig(AppConfig):
    name = "mica.methodology"
    label = "methodology"
    verbose_name = _("Methodology")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from mica.methodology import signals  # noqa: F401  (a published edition is frozen)

        self._frozen_rows_register()

    def _frozen_rows_register(self):
        """What the ORM refuses of a published edition (mica.methodology.signals), the
        database refuses too: its thresholds and every other column but its status (which
        moves on to superseded) and the catalogue a loaded edition freezes once; its
        chapters, claims, references, glossary, contract and policy lines. The triggers
        are made after every migrate by the catalogue's receiver (mica.frozen_rows)."""
        from mica.frozen_rows import FrozenRows, frozen_rows_register
        from mica.methodology import models

        edition = models.Edition._meta
        frozen_rows_register(
            FrozenRows(
                table=edition.db_table,
                frozen="{row}.status <> 'draft'",
                what="a published edition",
                columns=tuple(
                    f.column
                    for f in edition.concrete_fields
                    if f.name not in ("id", "status", "catalogue_snapshot")
                ),
                children=tuple(
                    (model._meta.db_table, "edition_id") for model in models.SECTION_MODELS
                ),
            )
        )
