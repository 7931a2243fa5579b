"""Loads the six market editions from content/<code>.yaml, idempotently."""

from pathlib import Path

from django.utils.translation import gettext as _

from markets.models import (
    Datasheet,
    DataStatement,
    IntegrationSituation,
    Market,
    MarketEdition,
    PlatformRegistration,
    RegistrationStatus,
)
from markets.services import coverage_audit, situation_errors
from mica.content import read_yaml, texts
from mica.errors import ValidationFailed
from mica.methodology.selectors import edition_current

CONTENT_DIR = Path(__file__).resolve().parent / "content"
MARKET_FILES = ["kr", "jp", "sg", "tw", "ae", "th"]


def _replace_children(manager, rows):
    manager.all().delete()
    for position, row in enumerate(rows, start=1):
        manager.create(position=position, **row)


def _load_market(data):
    plain = (
        "native_name",
        "native_lang",
        "locale",
        "currency_code",
        "currency_symbol",
        "timezone",
        "display_order",
    )
    market, _created = Market.objects.update_or_create(
        code=data["code"], defaults={**{k: data[k] for k in plain}, **texts(data, "name")}
    )
    return market


def _load_situations(market_edition, items):
    kept = []
    for position, item in enumerate(items, start=1):
        situation = IntegrationSituation.objects.filter(
            market_edition=market_edition, situation_id=item["id"]
        ).first() or IntegrationSituation(market_edition=market_edition, situation_id=item["id"])
        situation.position = position
        for name in (
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
        ):
            setattr(situation, name, item[name])
        for name, value in texts(item, "title", "detail", "capability_area").items():
            setattr(situation, name, value)
        errors = situation_errors(situation, market_edition.market.code)
        if errors:
            raise ValidationFailed(f"{item['id']}: {errors}")
        situation.save()
        kept.append(situation.pk)
    market_edition.situations.exclude(pk__in=kept).delete()


def _load_platforms(market_edition, items):
    for item in items:
        registration = (
            PlatformRegistration.objects.filter(
                market_edition=market_edition, task_family=item["task_family"]
            )
            .exclude(status=RegistrationStatus.SUPERSEDED)
            .first()
        )
        if registration and registration.frozen:
            continue  # a pre-registered set is never rewritten by a content load
        registration = registration or PlatformRegistration.objects.create(
            market_edition=market_edition, task_family=item["task_family"]
        )
        registration.platforms.all().delete()
        for rank, platform in enumerate(item["candidates"], start=1):
            plain = ("native_name", "kind", "snapshot_date", "source", "source_accessed")
            registration.platforms.create(
                rank=rank,
                **{k: platform[k] for k in plain},
                **texts(platform, "name", "local_reach", "availability", "relevance"),
            )


def _load_edition(market, data, edition):
    market_edition, _created = MarketEdition.objects.update_or_create(
        market=market,
        edition=edition,
        defaults=texts(data["edition"], "edition_note", "profile_summary"),
    )
    _replace_children(
        market_edition.hazards,
        [
            {"diagnostic_axis": h["diagnostic_axis"], **texts(h, "title", "detail")}
            for h in data["hazards"]
        ],
    )
    _replace_children(
        market_edition.local_changes,
        [
            {"locality_condition": c["locality_condition"], **texts(c, "text")}
            for c in data["local_changes"]
        ],
    )
    _load_situations(market_edition, data["situations"])
    _load_platforms(market_edition, data["platforms"])
    sheet = data["datasheet"]
    Datasheet.objects.update_or_create(
        market_edition=market_edition,
        defaults=texts(
            sheet,
            "motivation",
            "composition",
            "collection",
            "intended_uses",
            "distribution",
            "maintenance",
        ),
    )
    statement = data["data_statement"]
    DataStatement.objects.update_or_create(
        market_edition=market_edition,
        defaults=texts(
            statement, "language_variety", "region", "channel_and_register", "reviewer_context"
        ),
    )
    return market_edition


def load(report):
    edition = edition_current()
    if edition.status != "draft":
        report(
            _("edition %(edition)s is published; market content left as it is")
            % {"edition": edition}
        )
        return
    for name in MARKET_FILES:
        data = read_yaml(CONTENT_DIR / f"{name}.yaml")
        market = _load_market(data)
        market_edition = _load_edition(market, data, edition)
        audit = coverage_audit(market_edition.situations.all())
        if not audit.complete:
            raise ValidationFailed(f"{market.code}: " + "; ".join(audit.gaps))
    report(f"markets: {len(MARKET_FILES)}")
