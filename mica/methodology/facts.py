"""Live figures: every number the copy states, counted from the records at render time."""

from django.utils.translation import gettext as _
from django.utils.translation import override

from mica.bilingual import LANGUAGES
from mica.methodology import models
from mica.methodology.extensions import live_figures_registered


def _threshold(value, language):
    if value is not None:
        return f"{value:g}"
    with override(language):
        return _("not set")


# Every figure of the prose but the thresholds, in the order pages and exports list them.
# Each must be counted by someone: a figure nobody registers fails loudly, never blank.
COUNTED_FIGURES = (
    "market_count",
    "market_codes",
    "family_count",
    "canonical_task_count",
    "candidate_task_count",
    "validated_task_count",
    "task_languages",
    "registered_system_count",
    "run_cell_count",
    "publication_eligible",
    "reference_count",
)


def live_facts(edition):
    """{"en": {placeholder: text}, "ko": {...}} for an edition."""
    counts = {
        "task_languages": ", ".join(LANGUAGES),  # every task text is written in both
        "reference_count": models.Reference.objects.filter(edition=edition).count(),
    }
    # Markets, tasks, systems, cells and eligibility: counted by the apps that own them.
    for figures in live_figures_registered():
        counts.update(figures(edition))
    facts = {}
    for language in LANGUAGES:
        values = {name: str(counts[name]) for name in COUNTED_FIGURES}
        values["min_eligible_runs"] = _threshold(edition.min_eligible_runs, language)
        values["min_coverage"] = _threshold(edition.min_coverage, language)
        facts[language] = values
    return facts
