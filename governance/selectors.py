import datetime

from django.db.models import BooleanField, Case, IntegerField, Value, When
from django.utils import timezone, translation

from governance.gate_inputs import gate_inputs_fingerprint
from governance.models import (
    Appeal,
    AppealState,
    Correction,
    DisclosureCategory,
    DisclosureStatement,
    GateCell,
    PersonDeclaration,
    Withdrawal,
)
from mica.content.fragments import computed
from mica.methodology.models import Edition
from mica.methodology.selectors import edition_current
from submissions.models import Attempt


def gate_inputs_current(edition):
    """The gate inputs' fingerprint as the pages compare cells with it: two queries over
    every task version, made once for each revision of the tables they read."""
    # One fingerprint for every language: it is made of codes and numbers, and the pages
    # of both languages that read it (the home page, the results) then share one read.
    with translation.override(None):
        return computed(
            "governance-gate-inputs",
            lambda: gate_inputs_fingerprint(edition),
            edition.pk if edition else None,
            tables=[Edition._meta.db_table],
        )


def cell_list(edition=None):
    """Every gate cell with what its pages show, in one query (and the two of the current
    inputs' fingerprint): `fresh` says whether it was computed under the current inputs."""
    current = gate_inputs_current(edition or edition_current())
    return (
        GateCell.objects.select_related("snapshot__system", "market", "family")
        .annotate(
            fresh=Case(
                When(inputs_fingerprint=current, then=Value(True)),
                default=Value(False),
                output_field=BooleanField(),
            )
        )
        .order_by(
            "snapshot__system__name",
            "snapshot__version",
            "market__display_order",
            "family__position",
        )
    )


def cell_get(cell_id):
    """A cell by its public id: system--version--market--family."""
    parts = cell_id.split("--")
    if len(parts) != 4:
        raise GateCell.DoesNotExist
    system, version, market, family = parts
    return cell_list().get(
        snapshot__system__slug=system,
        snapshot__version=version,
        market__code=market.upper(),
        family__slug=family,
    )


def publishable_cells():
    return cell_list().filter(publication_eligible=True, fresh=True)


def cells_stale_exist():
    """Whether any cell was computed under other inputs than the current ones."""
    current = gate_inputs_fingerprint(edition_current())
    return GateCell.objects.exclude(inputs_fingerprint=current).exists()


def corrections_by_section(edition):
    """section id -> its corrections, oldest first (one query)."""
    index = {}
    for correction in Correction.objects.filter(edition=edition).order_by("decided_on", "pk"):
        index.setdefault(correction.section_id, []).append(correction)
    return index


def disclosure_current():
    """Current statements, in the register's own order of categories (operator first)."""
    order = Case(
        *[
            When(category=code, then=Value(index))
            for index, code in enumerate(DisclosureCategory.values)
        ],
        output_field=IntegerField(),
    )
    return (
        DisclosureStatement.objects.filter(superseded_at__isnull=True)
        .annotate(category_order=order)
        .order_by("category_order", "key")
    )


def disclosure_key_taken(key):
    """Whether the register has a current statement under `key`."""
    return disclosure_current().filter(key=key).exists()


def disclosure_history():
    return DisclosureStatement.objects.filter(superseded_at__isnull=False).order_by(
        "key", "-superseded_at"
    )


def is_stale(statement, today=None):
    """Past its confirmation date: flagged, never silently trusted."""
    today = today or timezone.localdate()
    return statement.confirmed_on + datetime.timedelta(days=statement.confirm_every_days) < today


def correction_log():
    return Correction.objects.select_related("edition", "challenge").order_by("-decided_on", "-pk")


def withdrawal_log():
    return Withdrawal.objects.select_related("edition")


def declares_holdout_access(user):
    """Whether the person's own declaration says they have holdout access."""
    return PersonDeclaration.objects.filter(user=user, holdout_access=True).exists()


def declaration_blocks_review(user, version):
    """Why this person may not approve this task version, or None.

    A conflict is with a system, and the system was evaluated on the task: an attempt
    on any version of it (an earlier one included) bars reviewing every version."""
    declaration = PersonDeclaration.objects.filter(user=user).first()
    if declaration is None:
        return None
    if declaration.holdout_access and declaration.affiliated_systems.exists():
        return "holdout-access"
    conflicted = declaration.conflicted_systems.all()
    evaluated = Attempt.objects.filter(
        task_version__definition_id=version.definition_id, snapshot__system__in=conflicted
    )
    if evaluated.exists():
        return "declared-conflict"
    return None


def appeals_awaiting_decision():
    """Appeals filed and not yet decided: the staff queue of appeals."""
    return Appeal.objects.filter(state=AppealState.RECEIVED)
