"""Writes the market editions of the current edition back to content/<code>.yaml.

One file per market, in the shape the loader reads: the market, its edition note
and profile, hazards, local changes, integration situations, the candidate
platforms of each family's live registration (superseded ones are history), the
datasheet and the data statement.
"""

import datetime
from pathlib import Path

from django.utils.translation import gettext as _

from markets.models import (
    DATA_STATEMENT_FIELDS,
    DATASHEET_FIELDS,
    LIVE_REGISTRATION,
    Datasheet,
    DataStatement,
    Market,
    MarketEdition,
    PlatformRegistration,
)
from mica.bilingual import field_pair
from mica.content.loading import Flow, Folded, Quoted, write_yaml
from mica.errors import ValidationFailed
from mica.methodology.selectors import edition_current
from mica.vocabulary import TaskFamily

CONTENT_DIR = Path(__file__).resolve().parent / "content"
SECTIONS = ("edition", "hazards", "local_changes", "situations", "platforms")


def _situation(situation):
    return {
        "id": situation.situation_id,
        "title": field_pair(situation, "title", Quoted),
        "detail": field_pair(situation, "detail", Folded),
        "capability_area": field_pair(situation, "capability_area", Quoted),
        "task_families": Flow(situation.task_families),
        "surfaces": Flow(situation.surfaces),
        "authorization_boundary": situation.authorization_boundary,
        "completion_semantics": situation.completion_semantics,
        "recovery_conditions": Flow(situation.recovery_conditions),
        "evidence_types": Flow(situation.evidence_types),
        "api_documented": situation.api_documented,
        "production_execution": situation.production_execution,
        "facts_source": situation.facts_source,
        "facts_source_date": situation.facts_source_date,
    }


def _platform(platform):
    return {
        "name": field_pair(platform, "name", Quoted),
        "native_name": Quoted(platform.native_name),
        "kind": platform.kind,
        "snapshot_date": platform.snapshot_date,
        "local_reach": field_pair(platform, "local_reach", Quoted),
        "availability": field_pair(platform, "availability", Quoted),
        "relevance": field_pair(platform, "relevance", Quoted),
        "source": platform.source,
        "source_accessed": platform.source_accessed,
    }


def _platforms(market_edition):
    """The live registration of each family, in the families' order."""
    # The method's order of families (the catalogue's records follow it too).
    order = {slug: position for position, slug in enumerate(TaskFamily.values)}
    live = {}
    registrations = (
        PlatformRegistration.objects.filter(market_edition=market_edition)
        .filter(LIVE_REGISTRATION)
        .order_by("pk")
        .prefetch_related("platforms")
    )
    for registration in registrations:
        live.setdefault(registration.task_family, registration)
    families = sorted(live, key=lambda slug: (order.get(slug, len(order) + 1), slug))
    return [_registration(family, live[family]) for family in families]


def _registration(family, registration):
    """A family's set; a frozen one with the day it was pre-registered (UTC), which a
    load into an empty database freezes it as of."""
    entry = {"task_family": family}
    if registration.frozen and registration.registered_at:
        entry["registered_on"] = registration.registered_at.astimezone(datetime.UTC).date()
    entry["candidates"] = [_platform(platform) for platform in registration.platforms.all()]
    return entry


def _market(market, market_edition):
    try:
        sheet, statement = market_edition.datasheet, market_edition.data_statement
    except (Datasheet.DoesNotExist, DataStatement.DoesNotExist) as missing:
        raise ValidationFailed(
            _("%(market)s has no datasheet or data statement in %(edition)s.")
            % {"market": market.code, "edition": market_edition.edition.slug}
        ) from missing
    return {
        "code": market.code,
        "name": field_pair(market, "name", Quoted),
        "native_name": Quoted(market.native_name),
        "native_lang": market.native_lang,
        "locale": market.locale,
        "currency_code": market.currency_code,
        "currency_symbol": Quoted(market.currency_symbol),
        "timezone": market.timezone,
        "display_order": market.display_order,
        "edition": {
            "edition_note": field_pair(market_edition, "edition_note", Folded),
            "profile_summary": field_pair(market_edition, "profile_summary", Folded),
        },
        "hazards": [
            {
                "title": field_pair(hazard, "title", Quoted),
                "detail": field_pair(hazard, "detail", Folded),
                "diagnostic_axis": hazard.diagnostic_axis,
            }
            for hazard in market_edition.hazards.order_by("position", "pk")
        ],
        "local_changes": [
            {
                "text": field_pair(change, "text", Folded),
                "locality_condition": change.locality_condition,
            }
            for change in market_edition.local_changes.order_by("position", "pk")
        ],
        "situations": [
            _situation(situation)
            for situation in market_edition.situations.order_by("position", "pk")
        ],
        "platforms": _platforms(market_edition),
        "datasheet": {name: field_pair(sheet, name, Folded) for name in DATASHEET_FIELDS},
        "data_statement": {
            name: field_pair(statement, name, Folded) for name in DATA_STATEMENT_FIELDS
        },
    }


def dump(directory, report):
    edition = edition_current()
    if edition is None:
        raise ValidationFailed(_("There is no edition to write out."))
    written = []
    for market in Market.objects.order_by("display_order"):
        market_edition = MarketEdition.objects.filter(market=market, edition=edition).first()
        if market_edition is None:
            report(f"{market.code} has no market edition in {edition.slug}; no file written")
            continue
        filename = f"{market.code.lower()}.yaml"
        write_yaml(
            directory / filename,
            _market(market, market_edition),
            header_from=CONTENT_DIR / filename,
            indent_sequences=True,
            double_quotes=True,
            blank_before={*SECTIONS, "datasheet", "data_statement"},
        )
        written.append(market.code)
    report(f"edition {edition.slug}: markets: {len(written)} ({', '.join(written)})")
