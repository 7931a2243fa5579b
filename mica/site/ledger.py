"""What the home page states, read from the records at render time.

`home_ledger` counts: markets, task families, the catalogue's lifecycle and
what the publication gate has let through. `method_frame` reads the method's
own records for the Test / Measure / Explain framework, so the page shows the
edition's words, never a copy of them.

Both run a fixed number of queries whatever the size of the records. Results
are read from the gate's cells (governance.gate), the one code path every
result takes, and only cells on official data count: demo and preview runs
are never measured runs and never make a system verified. A figure that
cannot exist yet is None, not 0, and the page says why in words.
"""

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, Sum

from catalogue.models import Lifecycle
from catalogue.selectors import family_list, task_public_list
from governance.selectors import cell_list, gate_inputs_current
from markets.selectors import market_list
from mica.methodology.models import ContractItem, ContractSection
from mica.methodology.selectors import edition_current, glossary_list
from mica.vocabulary import DiagnosticAxis
from submissions.models import DataStatus, Verification

OFFICIAL = Q(data_status=DataStatus.OFFICIAL)
VERIFIED = OFFICIAL & Q(verification=Verification.INDEPENDENT_RERUN)
# Eligible as of now: computed eligible under the current inputs (governance.selectors).
PUBLISHABLE = Q(publication_eligible=True, fresh=True)

# The records the framework is drawn from, by their stable section ids.
TEST_TERM = "task-contract"
OUTCOME_AXES_SECTION = "axes"
SCORING_SECTION = "scoring-contract"
DIAGNOSTICS_SECTION = "diagnostics"
PUBLICATION_SECTION = "publication"
FRAME_SECTIONS = (OUTCOME_AXES_SECTION, SCORING_SECTION, DIAGNOSTICS_SECTION, PUBLICATION_SECTION)
# A contract term names the axis, then what it is measured in: "Speed · wall-clock seconds".
TERM_SEPARATOR = " · "


@dataclass(frozen=True)
class MarketEntry:
    code: str
    name: str
    native_name: str
    native_lang: str


@dataclass(frozen=True)
class FamilyEntry:
    slug: str
    label: str
    summary: str
    public_tasks: int


@dataclass(frozen=True)
class HomeLedger:
    markets: list
    families: list
    candidate_tasks: int
    validated_tasks: int
    # None until the gate has something to show: absence is not a zero.
    published_result_families: int | None
    verified_systems: int | None
    measured_runs: int | None
    thresholds_set: bool
    publication_eligible: bool


@dataclass(frozen=True)
class MethodRecord:
    section_id: str
    title: str
    text: str


@dataclass(frozen=True)
class OutcomeAxis:
    section_id: str
    name: str
    measure: str
    decision_rule: str


@dataclass(frozen=True)
class DiagnosticEntry:
    number: int
    code: str
    section_id: str | None
    name: str
    detail: str


@dataclass(frozen=True)
class MethodFrame:
    test: MethodRecord | None
    measure: MethodRecord | None
    scoring: MethodRecord | None
    explain: MethodRecord | None
    publication: MethodRecord | None
    outcome_axes: list
    diagnostic_axes: list


def _markets(edition):
    """The markets this edition declares, in the method's order: each has an edition page."""
    markets = market_list().filter(editions__edition=edition) if edition else market_list().none()
    return [MarketEntry(m.code, m.name, m.native_name, m.native_lang) for m in markets]


def _public_task_counts():
    """{(family id, lifecycle): count} over the public catalogue, holdout never included."""
    rows = (
        task_public_list()
        .prefetch_related(None)
        .order_by()
        .values("family_id", "lifecycle")
        .annotate(count=Count("pk"))
    )
    return {(row["family_id"], row["lifecycle"]): row["count"] for row in rows}


def home_window(query, reads):
    """What the home page shows of the task tables, as the bake compares it
    (mica.site.bake.WINDOW_VIEWS): no task's own row, only how many tasks each family has
    in each lifecycle and the gate inputs' fingerprint, by which its gate figures count
    only cells computed under the current inputs. A task's edit that moves neither (a
    title, a contract) leaves the page as it was. `reads` keeps them for the other
    language's page."""
    if query:
        return None
    if not reads:
        reads["counts"] = sorted([*key, count] for key, count in _public_task_counts().items())
        reads["gate"] = gate_inputs_current(edition_current())
    return [], {"counts": reads["counts"], "gate": reads["gate"]}


def _families(counts):
    in_force = (Lifecycle.CANDIDATE, Lifecycle.VALIDATED)
    return [
        FamilyEntry(
            family.slug,
            family.label,
            family.summary,
            sum(counts.get((family.pk, lifecycle), 0) for lifecycle in in_force),
        )
        for family in family_list()
    ]


def _lifecycle_total(counts, lifecycle):
    return sum(count for (_family, state), count in counts.items() if state == lifecycle)


def _gate_figures(edition):
    """What the gate's cells hold, in one query; only official data is counted."""
    return cell_list(edition).aggregate(
        publishable_cells=Count("pk", filter=PUBLISHABLE),
        published_result_families=Count("family", distinct=True, filter=PUBLISHABLE),
        verified_systems=Count("snapshot__system", distinct=True, filter=VERIFIED),
        measured_runs=Sum("eligible_runs", filter=OFFICIAL),
    )


def _thresholds_set(edition):
    return edition is not None and edition.thresholds_set


def home_ledger(edition):
    """The live ledger of an edition (None: no edition yet, so nothing is declared)."""
    counts = _public_task_counts()
    gate = _gate_figures(edition)
    # The rule of governance.publication.edition_is_publication_eligible, read from the
    # same aggregate so the page runs the same queries whatever the thresholds.
    eligible = _thresholds_set(edition) and gate["publishable_cells"] > 0
    return HomeLedger(
        markets=_markets(edition),
        families=_families(counts),
        candidate_tasks=_lifecycle_total(counts, Lifecycle.CANDIDATE),
        validated_tasks=_lifecycle_total(counts, Lifecycle.VALIDATED),
        # Fail closed: a cell marked eligible under thresholds since unset publishes nothing.
        published_result_families=(gate["published_result_families"] or None) if eligible else None,
        verified_systems=gate["verified_systems"] or None,
        measured_runs=gate["measured_runs"] or None,
        thresholds_set=_thresholds_set(edition),
        publication_eligible=eligible,
    )


def _section_record(section):
    if section is None:
        return None
    return MethodRecord(section.section_id, section.title, section.lead)


def _outcome_axis(item):
    name, _separator, measure = item.term.partition(TERM_SEPARATOR)
    return OutcomeAxis(item.section_id, name, measure, item.detail)


def _diagnostic_axes(section):
    """The seven axes in the vocabulary's order, each with the edition's own words for it."""
    items = {item.section_id: item for item in section.items.all()} if section else {}
    entries = []
    for number, axis in enumerate(DiagnosticAxis, start=1):
        item = items.get(f"{DIAGNOSTICS_SECTION}-{axis.value}")
        entries.append(
            DiagnosticEntry(
                number=number,
                code=axis.value,
                section_id=item.section_id if item else None,
                name=item.term if item else str(axis.label),
                detail=item.detail if item else "",
            )
        )
    return entries


def method_frame(edition):
    """Test / Measure / Explain as the edition's records state them."""
    if edition is None:
        return MethodFrame(None, None, None, None, None, [], [])
    items = Prefetch("items", queryset=ContractItem.objects.order_by("position", "pk"))
    sections = {
        section.section_id: section
        for section in ContractSection.objects.filter(
            edition=edition, section_id__in=FRAME_SECTIONS
        ).prefetch_related(items)
    }
    term = glossary_list(edition).filter(section_id=TEST_TERM).first()
    axes = sections.get(OUTCOME_AXES_SECTION)
    return MethodFrame(
        test=MethodRecord(term.section_id, term.term, term.definition) if term else None,
        measure=_section_record(axes),
        scoring=_section_record(sections.get(SCORING_SECTION)),
        explain=_section_record(sections.get(DIAGNOSTICS_SECTION)),
        publication=_section_record(sections.get(PUBLICATION_SECTION)),
        outcome_axes=[_outcome_axis(item) for item in axes.items.all()] if axes else [],
        diagnostic_axes=_diagnostic_axes(sections.get(DIAGNOSTICS_SECTION)),
    )
