"""Live figures: every number the copy states, counted from the records at render time."""

from django.utils.translation import gettext as _
from django.utils.translation import override

from catalogue.models import Lifecycle
from catalogue.selectors import task_public_list
from markets.selectors import market_codes
from mica.methodology import models

TASK_TEXT_LANGUAGES = ("en", "ko")


def _threshold(value, language):
    if value is not None:
        return f"{value:g}"
    with override(language):
        return _("not set")


def run_cell_count(edition):
    """Cells holding official run records; demo and preview cells are never counted."""
    from governance.models import GateCell

    return GateCell.objects.filter(data_status="official").count()


def registered_system_count():
    """Systems with an official snapshot; demo and preview systems are never registered."""
    from submissions.models import System

    return System.objects.filter(snapshots__data_status="official").distinct().count()


def edition_is_publication_eligible(edition):
    """Fail closed: unset thresholds refuse everything, and without a cell there is nothing."""
    from governance.models import GateCell

    thresholds_set = edition.min_eligible_runs is not None and edition.min_coverage is not None
    return thresholds_set and GateCell.objects.filter(publication_eligible=True).exists()


def live_facts(edition):
    """{"en": {placeholder: text}, "ko": {...}} for an edition."""
    codes = market_codes(edition)
    tasks = task_public_list()
    counts = {
        "market_count": len(codes),
        "market_codes": ", ".join(codes),
        "family_count": tasks.values("family").distinct().count(),
        "canonical_task_count": tasks.count(),
        "candidate_task_count": tasks.filter(lifecycle=Lifecycle.CANDIDATE).count(),
        "validated_task_count": tasks.filter(lifecycle=Lifecycle.VALIDATED).count(),
        "task_languages": ", ".join(TASK_TEXT_LANGUAGES),
        "registered_system_count": registered_system_count(),
        "run_cell_count": run_cell_count(edition),
        "publication_eligible": "true" if edition_is_publication_eligible(edition) else "false",
        "reference_count": models.Reference.objects.filter(edition=edition).count(),
    }
    facts = {}
    for language in ("en", "ko"):
        values = {name: str(value) for name, value in counts.items()}
        values["min_eligible_runs"] = _threshold(edition.min_eligible_runs, language)
        values["min_coverage"] = _threshold(edition.min_coverage, language)
        facts[language] = values
    return facts
