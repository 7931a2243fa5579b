"""Catalogue records shaped for pages and the API."""

import hashlib

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from catalogue.models import (
    Applicability,
    ClauseKind,
    Complexity,
    Lifecycle,
    TaskSurface,
    TerminationClass,
)
from catalogue.selectors import (
    catalogue_balance_counts,
    task_clauses_fetch,
    task_markets_applying,
    task_row_sources,
)
from mica.content.fragments import (
    computed,
    fragment_key,
    fragments_get,
    fragments_on,
    fragments_set,
)
from mica.dot_matrix import dot_matrix
from mica.vocabulary import DiagnosticAxis, EvidenceType, LocalityCondition, label_for


def contract(version):
    clauses = list(version.clauses.all())
    return {
        "obligations": [c for c in clauses if c.kind == ClauseKind.OBLIGATION],
        "invariants": [c for c in clauses if c.kind == ClauseKind.INVARIANT],
        "prohibited": [c for c in clauses if c.kind == ClauseKind.PROHIBITED],
        "evidence": [label_for(EvidenceType, code) for code in version.evidence_requirements],
        "axes": [label_for(DiagnosticAxis, code) for code in version.diagnostic_axes],
        "locality": [label_for(LocalityCondition, code) for code in version.locality_conditions],
    }


def _market_line(applicable):
    """ "KR, JP (variant), SG": the markets where a task applies, as one line of text;
    `applicable` holds (market code, status) pairs."""
    variant = _("variant")
    return ", ".join(
        f"{code} ({variant})" if status == Applicability.VARIANT_REQUIRED else code
        for code, status in applicable
    )


def task_card(definition):
    version = definition.current_version
    applicability = sorted(version.applicability.all(), key=lambda a: a.market.display_order)
    applicable = [a for a in applicability if a.applies]
    return {
        "definition": definition,
        "version": version,
        "markets": applicable,
        "market_line": _market_line([(a.market.code, a.status) for a in applicable]),
        "applicability": applicability,
        "contract": contract(version),
    }


def list_cards(definitions):
    """Cards for the catalogue page, with each task's link and lifecycle label ready.

    A hundred `{% url %}` lookups and lazy labels were a measurable share of the
    page's render; the link is reversed once and the labels translated once. A row
    shows the markets where the task applies as one line, read as plain values.
    """
    task_clauses_fetch(definitions)
    applying = task_markets_applying(definitions)
    placeholder = "placeholder-task"
    link = reverse("catalogue:task-detail", args=[placeholder])
    lifecycles = {code: str(label) for code, label in Lifecycle.choices}
    return [
        {
            "definition": definition,
            "version": definition.current_version,
            "market_line": _market_line(applying[definition.current_version_id]),
            "contract": contract(definition.current_version),
            "url": link.replace(placeholder, definition.slug),
            "lifecycle_label": lifecycles[definition.lifecycle],
        }
        for definition in definitions
    ]


ROW_TEMPLATE = "catalogue/_task_row.html"


def task_rows(definitions):
    """Each task's row of the catalogue page as HTML, kept in the fragment cache.

    A row is kept under a digest of every stored value it is made of, so an edit to one
    task changes that row's key alone, whatever wrote it; being made of what it shows,
    such a key is right for any reader, even a transaction with changes of its own. The
    digests of these rows alone are read, as plain values (a page of the catalogue
    reads no other task's rows); only the rows not kept read their contracts as records
    and render.
    """
    if not fragments_on():
        return _rendered_rows(definitions)
    digests = _row_digests(definitions)
    keys = {
        d.pk: fragment_key("catalogue-task-row", {}, (), d.pk, digests[d.pk])
        # A task made public since the digests were read renders afresh and is not kept.
        for d in definitions
        if d.pk in digests
    }
    kept = fragments_get(keys.values())
    missing = [d for d in definitions if keys.get(d.pk) not in kept]
    rendered = dict(zip(missing, _rendered_rows(missing), strict=True))
    fragments_set({keys[d.pk]: row for d, row in rendered.items() if d.pk in keys})
    return [rendered[d] if d in rendered else kept[keys[d.pk]] for d in definitions]


def _row_digests(definitions):
    sources = task_row_sources(definitions)
    return {pk: hashlib.sha256(repr(source).encode()).hexdigest() for pk, source in sources.items()}


def _rendered_rows(definitions):
    return [
        mark_safe(render_to_string(ROW_TEMPLATE, {"card": card}))
        for card in list_cards(definitions)
    ]


BALANCE_TEMPLATE = "catalogue/_balance.html"


def balance_figures():
    """The catalogue's balance as HTML, made once for each revision of what it counts."""
    return computed("catalogue-balance", _rendered_balance)


def _rendered_balance():
    counted = catalogue_balance_counts()
    return mark_safe(render_to_string(BALANCE_TEMPLATE, {"balance": balance(counted)}))


def balance(counted):
    """The catalogue over surface × termination class, one figure per declared complexity;
    `counted` maps (complexity, surface, termination class) to a number of tasks."""
    surfaces = TaskSurface.choices
    terminations = TerminationClass.choices
    figures = []
    for complexity, complexity_label in Complexity.choices:
        counts = [
            [counted.get((complexity, surface, end), 0) for end, _label in terminations]
            for surface, _label in surfaces
        ]
        figures.append(
            {
                "key": complexity,
                "label": complexity_label,
                "rows": [
                    {"label": label, "counts": counts[i]} for i, (_c, label) in enumerate(surfaces)
                ],
                "figure": dot_matrix(
                    [str(i + 1) for i in range(len(surfaces))],
                    [label for _c, label in terminations],
                    counts,
                ),
            }
        )
    return {"figures": figures, "surfaces": surfaces, "terminations": terminations}
