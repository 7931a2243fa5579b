"""A task version's contract as a definition list.

Written in Python rather than as an included template: the catalogue page shows
one contract per task, and rendering a hundred of them through the template
engine (with a translation lookup per label per task) was most of its time.
Labels are looked up once per language and process; they are interface
strings, fixed for a release.
"""

from functools import lru_cache
from html import escape

from django import template
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext_lazy, ngettext
from django.utils.translation import gettext as _

from catalogue.models import Complexity, ReferenceStatus, TaskSurface, TerminationClass

register = template.Library()

HEADINGS = {
    "final_state": gettext_lazy("Final state"),
    "obligations": gettext_lazy("Obligations"),
    "invariants": gettext_lazy("Invariants"),
    "prohibited": gettext_lazy("Prohibited states"),
    "boundary": gettext_lazy("Confirmation boundary"),
    "evidence": gettext_lazy("Evidence required"),
    "idempotency": gettext_lazy("Idempotency"),
    "design": gettext_lazy("Design"),
    "axes": gettext_lazy("Diagnostic axes"),
    "locality": gettext_lazy("Locality conditions"),
    "references": gettext_lazy("Speed and cost references"),
}
CHOICES = (TaskSurface, TerminationClass, Complexity, ReferenceStatus)


@lru_cache(maxsize=8)
def _labels(language):
    """Headings and choice labels of one language, translated once."""
    labels = {key: escape(str(text)) for key, text in HEADINGS.items()}
    labels["no_idempotency"] = _("No non-idempotent action.")
    for choices in CHOICES:
        labels.update({(choices, code): str(label) for code, label in choices.choices})
    return labels


def _clauses(clauses):
    return "<ul>" + "".join(f"<li>{escape(c.text)}</li>" for c in clauses) + "</ul>"


def _joined(labels):
    return escape(", ".join(str(label) for label in labels))


def _design(version, labels):
    codes = [
        (TaskSurface, version.surface),
        (TerminationClass, version.termination_class),
        (Complexity, version.declared_complexity),
    ]
    return escape(" · ".join(labels.get(key, key[1]) for key in codes))


def _references(version, labels):
    """The status, and once registered the pre-registered values themselves: a reader
    is told what a score is measured against, not only that something is."""
    status = labels[(ReferenceStatus, version.reference_status)]
    if version.reference_status != ReferenceStatus.REGISTERED:
        return escape(status)
    values = version.references()
    sentence = ngettext(
        "%(status)s: speed %(speed)s s, cost %(cost)s USD, from a sample of %(sample)s run",
        "%(status)s: speed %(speed)s s, cost %(cost)s USD, from a sample of %(sample)s runs",
        values["sample_size"],
    )
    return escape(
        sentence
        % {
            "status": status,
            "speed": values["speed_seconds"],
            "cost": values["cost_usd"],
            "sample": values["sample_size"],
        }
    )


@register.simple_tag
def task_contract(version, contract):
    labels = _labels(get_language())
    rows = [
        ("final_state", escape(version.final_state)),
        ("obligations", _clauses(contract["obligations"])),
        ("invariants", _clauses(contract["invariants"])),
        ("prohibited", _clauses(contract["prohibited"])),
        ("boundary", escape(version.confirmation_boundary)),
        ("evidence", _joined(contract["evidence"])),
        ("idempotency", escape(version.idempotency or labels["no_idempotency"])),
        ("design", _design(version, labels)),
        ("axes", _joined(contract["axes"])),
        ("locality", _joined(contract["locality"])),
        ("references", _references(version, labels)),
    ]
    body = "\n  ".join(f"<dt>{labels[key]}</dt><dd>{value}</dd>" for key, value in rows)
    return mark_safe(f'<dl class="stacked contract">\n  {body}\n</dl>')  # every value escaped above
