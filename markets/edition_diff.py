"""What a market edition declares, record by record, as the edition diff compares two
editions (registered with mica.methodology.extensions in MarketsConfig.ready): the
edition note, situations, hazards, local changes, representative platforms, datasheet
and data statement, each keyed so that it is matched across editions and titled in
both languages."""

from django.db.models import Prefetch
from django.utils.text import Truncator, capfirst

from markets.models import (
    DATA_STATEMENT_FIELDS,
    DATASHEET_FIELDS,
    LIVE_REGISTRATION,
    Hazard,
    IntegrationSituation,
    LocalChange,
    MarketEdition,
    PlatformRegistration,
    RepresentativePlatform,
)
from mica.bilingual import LANGUAGES, field_pair
from mica.methodology.diff import bilingual, diff_record
from mica.vocabulary import EvidenceType, RecoveryCondition, Surface, TaskFamily

SITUATION_FIELDS = (
    "title",
    "detail",
    "capability_area",
    "task_families",
    "surfaces",
    "authorization_boundary",
    "completion_semantics",
    "recovery_conditions",
    "evidence_types",
    "status",
    "api_documented",
    "production_execution",
    "facts_source",
    "facts_source_date",
)
SITUATION_VOCABULARIES = {
    "task_families": TaskFamily.choices,
    "surfaces": Surface.choices,
    "recovery_conditions": RecoveryCondition.choices,
    "evidence_types": EvidenceType.choices,
}
PLATFORM_FIELDS = (
    "name",
    "native_name",
    "kind",
    "snapshot_date",
    "local_reach",
    "availability",
    "relevance",
    "source",
    "source_accessed",
)


def _kind(model):
    return bilingual(model._meta.verbose_name, capfirst)


def _market_edition_records(market_edition):
    market = market_edition.market
    records = [
        diff_record(
            key="edition",
            kind=_kind(MarketEdition),
            title=field_pair(market, "name"),
            instance=market_edition,
            fields=("edition_note", "profile_summary"),
        )
    ]
    records += [
        diff_record(
            key=f"situation:{situation.situation_id}",
            kind=_kind(IntegrationSituation),
            title=field_pair(situation, "title"),
            instance=situation,
            fields=SITUATION_FIELDS,
            vocabularies=SITUATION_VOCABULARIES,
        )
        for situation in market_edition.situations.all()
    ]
    # Hazards and local changes have no id of their own: matched by their place.
    records += [
        diff_record(
            key=f"hazard:{hazard.position}",
            kind=_kind(Hazard),
            title=field_pair(hazard, "title"),
            instance=hazard,
            fields=("title", "detail", "diagnostic_axis"),
        )
        for hazard in market_edition.hazards.all()
    ]
    records += [
        diff_record(
            key=f"local-change:{change.position}",
            kind=_kind(LocalChange),
            title=field_pair(change, "text", lambda text: Truncator(text).chars(80)),
            instance=change,
            fields=("text", "locality_condition"),
        )
        for change in market_edition.local_changes.all()
    ]
    records += _platform_records(market_edition)
    for name, model_fields in (
        ("datasheet", DATASHEET_FIELDS),
        ("data_statement", DATA_STATEMENT_FIELDS),
    ):
        record = getattr(market_edition, name, None)
        if record is not None:
            kind = _kind(type(record))
            records.append(
                diff_record(key=name, kind=kind, title=kind, instance=record, fields=model_fields)
            )
    return records


def _family_title(family):
    return bilingual(dict(TaskFamily.choices).get(family, family))


def _platform_records(market_edition):
    """The set in force per family (its status), and each of its platforms by rank."""
    records = []
    for registration in market_edition.platform_registrations.all():
        family = _family_title(registration.task_family)
        records.append(
            diff_record(
                key=f"platforms:{registration.task_family}",
                kind=_kind(PlatformRegistration),
                title=family,
                instance=registration,
                fields=("status",),
            )
        )
        for platform in registration.platforms.all():
            name = field_pair(platform, "name")
            records.append(
                diff_record(
                    key=f"platform:{registration.task_family}:{platform.rank}",
                    kind=_kind(RepresentativePlatform),
                    title={lang: f"{name[lang]} · {family[lang]}" for lang in LANGUAGES},
                    instance=platform,
                    fields=PLATFORM_FIELDS,
                )
            )
    return records


def market_edition_records(edition):
    """Per market of the edition, in market order: its title and its records (a constant
    number of queries, whatever the markets declare)."""
    market_editions = (
        MarketEdition.objects.filter(edition=edition)
        .select_related("market", "datasheet", "data_statement")
        .prefetch_related(
            "situations",
            "hazards",
            "local_changes",
            Prefetch(
                "platform_registrations",
                queryset=PlatformRegistration.objects.filter(LIVE_REGISTRATION)
                .order_by("task_family", "pk")
                .prefetch_related("platforms"),
            ),
        )
        .order_by("market__display_order")
    )
    return [
        {
            "key": market_edition.market.code,
            "title": field_pair(market_edition.market, "name"),
            "records": _market_edition_records(market_edition),
        }
        for market_edition in market_editions
    ]
