"""A published edition's market editions are frozen with it: the notes and profile it
published, its hazards, local changes, datasheet and data statement.

Seed 000: "The method is versioned by edition". What a market declared for an edition
is part of what that edition published; a change is a new edition's. The ORM refuses
it here (so the admin, commands and shell meet a sentence), and the database refuses it
to any SQL through mica.frozen_rows. Integration situations and platform registrations
keep their own lifecycles: run evidence marks a situation exercised, and platform sets
are pre-registered and frozen before a run, while the edition is in force.
"""

from django.db.models.signals import pre_delete, pre_save
from django.utils.translation import gettext as _

from markets import models
from mica.errors import ValidationFailed
from mica.frozen_rows import FrozenRows
from mica.methodology.models import Edition, EditionStatus

PARTS = (models.Hazard, models.LocalChange, models.Datasheet, models.DataStatement)

GUARD = FrozenRows(
    table=models.MarketEdition._meta.db_table,
    frozen=(
        f"EXISTS (SELECT 1 FROM {Edition._meta.db_table} e "
        "WHERE e.id = {row}.edition_id AND e.status <> 'draft')"
    ),
    what="a published edition's market edition",
    children=tuple((part._meta.db_table, "market_edition_id") for part in PARTS),
    inserts=True,
)


def edition_published(edition_id):
    """Whether the edition of that id is past its draft."""
    return Edition.objects.filter(pk=edition_id).exclude(status=EditionStatus.DRAFT).exists()


def market_edition_published(market_edition_id):
    return models.MarketEdition.objects.filter(
        pk=market_edition_id, edition__in=Edition.objects.exclude(status=EditionStatus.DRAFT)
    ).exists()


def _refuse():
    raise ValidationFailed(
        _(
            "This market edition belongs to a published edition and cannot change; "
            "changes go into a new edition."
        )
    )


def _market_edition_frozen(sender, instance, **kwargs):
    stored = models.MarketEdition.objects.filter(pk=instance.pk).values("edition_id").first()
    if edition_published(instance.edition_id) or (
        stored and edition_published(stored["edition_id"])
    ):
        _refuse()


def _part_frozen(sender, instance, **kwargs):
    stored = sender.objects.filter(pk=instance.pk).values("market_edition_id").first()
    if market_edition_published(instance.market_edition_id) or (
        stored and market_edition_published(stored["market_edition_id"])
    ):
        _refuse()


def frozen_market_editions_connect():
    for signal, kind in ((pre_save, "save"), (pre_delete, "delete")):
        uid = f"frozen-market-edition-{kind}"
        signal.connect(_market_edition_frozen, sender=models.MarketEdition, dispatch_uid=uid)
        for part in PARTS:
            uid = f"frozen-{part.__name__}-{kind}"
            signal.connect(_part_frozen, sender=part, dispatch_uid=uid)
