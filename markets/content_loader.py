"""Loads the six market editions from content/<code>.yaml; edited records are kept."""

import datetime
from pathlib import Path

from django.utils.translation import gettext as _

from markets.models import (
    DATA_STATEMENT_FIELDS,
    DATASHEET_FIELDS,
    LIVE_REGISTRATION,
    Datasheet,
    DataStatement,
    Hazard,
    IntegrationSituation,
    LocalChange,
    Market,
    MarketEdition,
    PlatformRegistration,
    RegistrationStatus,
    RepresentativePlatform,
)
from markets.services import coverage_audit, situation_errors
from mica.content.loading import read_yaml, texts
from mica.errors import ValidationFailed
from mica.methodology.models import EditionStatus
from mica.methodology.selectors import edition_current

CONTENT_DIR = Path(__file__).resolve().parent / "content"
MARKET_FILES = ["kr", "jp", "sg", "tw", "ae", "th"]


def _load_market(canonical, data):
    plain = (
        "native_name",
        "native_lang",
        "locale",
        "currency_code",
        "currency_symbol",
        "timezone",
        "display_order",
    )
    market, _outcome = canonical.record(
        Market,
        data["code"],
        {"code": data["code"]},
        {**{k: data[k] for k in plain}, **texts(data, "name")},
    )
    return market


def _load_parts(canonical, market_edition, model, kind, rows):
    """Hazards and local changes, each found by its place in the market edition's list."""
    key = f"{market_edition.market.code}/{market_edition.edition.slug}/{kind}"
    for position, row in enumerate(rows, start=1):
        canonical.record(
            model,
            f"{key}/{position}",
            {"market_edition": market_edition, "position": position},
            row,
        )


def _check_situation(situation, market_code):
    errors = situation_errors(situation, market_code)
    if errors:
        raise ValidationFailed(f"{situation.situation_id}: {errors}")


def _load_situations(canonical, market_edition, items):
    code = market_edition.market.code
    key = f"{code}/{market_edition.edition.slug}"
    plain = (
        "task_families",
        "surfaces",
        "recovery_conditions",
        "evidence_types",
        "authorization_boundary",
        "completion_semantics",
        "api_documented",
        "production_execution",
        "facts_source",
        "facts_source_date",
    )

    def update(situation, values):
        for name, value in values.items():
            setattr(situation, name, value)
        _check_situation(situation, code)
        situation.save()
        return situation

    for position, item in enumerate(items, start=1):
        lookup = {"market_edition": market_edition, "situation_id": item["id"]}
        values = {
            "position": position,
            **{name: item[name] for name in plain},
            **texts(item, "title", "detail", "capability_area"),
        }
        existing = IntegrationSituation.objects.filter(**lookup).first()
        if existing is None:
            _check_situation(IntegrationSituation(**lookup, **values), code)
        canonical.record(
            IntegrationSituation,
            f"{key}/{item['id']}",
            lookup,
            values,
            existing=existing,
            update=update,
        )


def _load_platforms(canonical, market_edition, items):
    key = f"{market_edition.market.code}/{market_edition.edition.slug}"
    for item in items:
        registration = (
            PlatformRegistration.objects.filter(LIVE_REGISTRATION)
            .filter(market_edition=market_edition, task_family=item["task_family"])
            .first()
        )
        if registration and registration.frozen:
            continue  # a pre-registered set is never rewritten by a content load
        registration = registration or PlatformRegistration.objects.create(
            market_edition=market_edition, task_family=item["task_family"]
        )
        outcomes = []
        for rank, platform in enumerate(item["candidates"], start=1):
            plain = ("native_name", "kind", "snapshot_date", "source", "source_accessed")
            _record, outcome = canonical.record(
                RepresentativePlatform,
                f"{key}/{item['task_family']}/{rank}",
                {"registration": registration, "rank": rank},
                {
                    **{k: platform[k] for k in plain},
                    **texts(platform, "name", "local_reach", "availability", "relevance"),
                },
            )
            outcomes.append(outcome)
        if item.get("registered_on"):
            _freeze_as_registered(canonical, registration, item, outcomes)


def _freeze_as_registered(canonical, registration, item, outcomes):
    """The content's own pre-registration: a set the file dates (`registered_on`) is frozen
    as of that day, the decision the method lead recorded in the content (README,
    "Representative platforms"). A draft someone edited since it was loaded stays a draft
    for the admin's four-eyes freeze: the file cannot vouch for what it did not write."""
    edited = "kept" in outcomes or registration.platforms.count() != len(item["candidates"])
    if edited:
        canonical.report(
            _("%(registration)s: edited since it was loaded, left as a draft to pre-register")
            % {"registration": registration}
        )
        return
    on = item["registered_on"]
    registration.status = RegistrationStatus.REGISTERED
    registration.registered_at = datetime.datetime(on.year, on.month, on.day, tzinfo=datetime.UTC)
    registration.save(update_fields=["status", "registered_at"])


def _load_edition(canonical, market, data, edition):
    key = f"{market.code}/{edition.slug}"
    market_edition, _outcome = canonical.record(
        MarketEdition,
        key,
        {"market": market, "edition": edition},
        texts(data["edition"], "edition_note", "profile_summary"),
    )
    _load_parts(
        canonical,
        market_edition,
        Hazard,
        "hazards",
        [
            {"diagnostic_axis": h["diagnostic_axis"], **texts(h, "title", "detail")}
            for h in data["hazards"]
        ],
    )
    _load_parts(
        canonical,
        market_edition,
        LocalChange,
        "local-changes",
        [
            {"locality_condition": c["locality_condition"], **texts(c, "text")}
            for c in data["local_changes"]
        ],
    )
    _load_situations(canonical, market_edition, data["situations"])
    _load_platforms(canonical, market_edition, data["platforms"])
    canonical.record(
        Datasheet,
        key,
        {"market_edition": market_edition},
        texts(data["datasheet"], *DATASHEET_FIELDS),
    )
    canonical.record(
        DataStatement,
        key,
        {"market_edition": market_edition},
        texts(data["data_statement"], *DATA_STATEMENT_FIELDS),
    )
    return market_edition


def load(canonical):
    edition = edition_current()
    if edition.status != EditionStatus.DRAFT:
        canonical.report(
            _("edition %(edition)s is published; market content left as it is")
            % {"edition": edition}
        )
        return
    for name in MARKET_FILES:
        data = read_yaml(canonical.directory(CONTENT_DIR) / f"{name}.yaml")
        market = _load_market(canonical, data)
        market_edition = _load_edition(canonical, market, data, edition)
        audit = coverage_audit(market_edition.situations.all())
        if not audit.complete:
            raise ValidationFailed(f"{market.code}: " + "; ".join(audit.gaps))
