"""Live figures: every number the copy states, counted from the records at render time."""

from django.utils.translation import gettext as _
from django.utils.translation import override

from mica.bilingual import LANGUAGES
from mica.methodology import models
from mica.methodology.extensions import live_figures_registered
from mica.methodology.pack import COUNTED_FIGURES


def _threshold(value, language):
    if value is not None:
        return f"{value:g}"
    with override(language):
        return _("not set")


def live_facts(edition):
    """{"en": {placeholder: text}, "ko": {...}} for an edition."""
    counts = {
        "task_languages": ", ".join(LANGUAGES),  # every task text is written in both
        "reference_count": models.Reference.objects.filter(edition=edition).count(),
    }
    # Markets, tasks, systems, cells and eligibility: counted by the apps that own them.
    # A figure nobody counts fails loudly (KeyError), never prints blank.
    for figures in live_figures_registered():
        counts.update(figures(edition))
    facts = {}
    for language in LANGUAGES:
        values = {name: str(counts[name]) for name in COUNTED_FIGURES}
        values["min_eligible_runs"] = _threshold(edition.min_eligible_runs, language)
        values["min_coverage"] = _threshold(edition.min_coverage, language)
        facts[language] = values
    return facts
