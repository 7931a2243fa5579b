"""Live figures: every number the copy states, counted from the records at render time.

Two kinds of entry per language: the figures a text prints as ``{{name}}``
(mica.methodology.pack.PLACEHOLDERS, always strings) and the states a sentence turns
on as ``{{#if name}}`` (pack.CONDITIONS, always booleans).
"""

from django.urls import reverse
from django.utils import formats
from django.utils.translation import gettext as _
from django.utils.translation import override

from mica.bilingual import LANGUAGES
from mica.methodology import models
from mica.methodology.extensions import live_figures_registered
from mica.methodology.pack import COUNTED_FIGURES, THRESHOLDS

# Thresholds that are shares, printed with their unit (seed 000 names coverage a "share
# of a market's canonical tasks"; the model stores both as a percentage).
PERCENT_THRESHOLDS = ("min_coverage", "max_ineligible_discard_rate")


def _threshold(name, value):
    if value is None:
        return _("not set")
    number = f"{value.normalize():f}" if hasattr(value, "normalize") else str(value)
    return f"{number}%" if name in PERCENT_THRESHOLDS else number


def _review_cutoff(edition, language):
    if edition.review_cutoff is None:
        return _("not set")
    if language == "ko":
        cutoff = edition.review_cutoff
        return f"{cutoff.year}년 {cutoff.month}월 {cutoff.day}일"  # seed 001: "2026년 8월 8일"
    return formats.date_format(edition.review_cutoff, "j F Y")  # seed 000: "8 August 2026"


def _edition_figures(edition, language):
    """What the edition itself states: thresholds, review cutoff, label, its pack's path."""
    with override(language):
        figures = {name: _threshold(name, getattr(edition, name)) for name in THRESHOLDS}
        figures["review_cutoff"] = _review_cutoff(edition, language)
        figures["edition_label"] = getattr(edition, f"version_label_{language}", "") or str(edition)
        figures["pack_path"] = reverse("methodology:download", args=[edition.slug, language])
    return figures


def _states(edition, counts):
    thresholds = {name: getattr(edition, name) is not None for name in THRESHOLDS}
    states = {f"{name}_set": is_set for name, is_set in thresholds.items()}
    states.update(
        thresholds_set=all(thresholds.values()),
        thresholds_unset=not any(thresholds.values()),
        gate_values_unset=not (thresholds["min_eligible_runs"] or thresholds["min_coverage"]),
        review_cutoff_set=edition.review_cutoff is not None,
        all_tasks_candidates=counts["candidate_task_count"] == counts["canonical_task_count"],
        edition_draft=edition.status == models.EditionStatus.DRAFT,
    )
    return states


def live_facts(edition):
    """{"en": {name: text or state}, "ko": {...}} for an edition."""
    counts = {
        "task_languages": ", ".join(LANGUAGES),  # every task text is written in both
        "reference_count": models.Reference.objects.filter(edition=edition).count(),
    }
    # Markets, tasks, systems, cells and eligibility: counted by the apps that own them.
    # A figure nobody counts fails loudly (KeyError), never prints blank.
    for figures in live_figures_registered():
        counts.update(figures(edition))
    states = _states(edition, counts)
    facts = {}
    for language in LANGUAGES:
        values = {name: str(counts[name]) for name in COUNTED_FIGURES}
        values.update(_edition_figures(edition, language))
        values.update(states)
        facts[language] = values
    return facts
