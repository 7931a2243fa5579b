from collections import Counter

from django import forms
from django.core import signing
from django.db.models import BooleanField, Case, Q, When
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from catalogue.models import TaskSet
from catalogue.selectors import family_list
from governance import presenters
from governance.aggregates import aggregate_view, canonical_tasks, snapshot_aggregates
from governance.models import (
    DecisionRight,
    GateCell,
    IndependenceItem,
    Refusal,
    RoleDisclosure,
)
from governance.selectors import (
    cell_get,
    cell_list,
    correction_log,
    disclosure_current,
    disclosure_history,
    is_stale,
    withdrawal_log,
)
from governance.sensitivity import gate_sensitivity, snapshot_id
from governance.services import appeal_file
from markets.selectors import market_list
from mica import scoring
from mica.clients import client_address
from mica.errors import DomainError
from submissions.challenges import APPEAL_SALT
from submissions.models import (
    COUNTED,
    FALLBACK_JUSTIFIED,
    Attempt,
    Challenge,
    DataStatus,
    System,
    Verification,
)
from submissions.selectors import challenge_public_get
from submissions.throttle import intake_allowed


class ResultsFilter(forms.Form):
    """GET filters with safe defaults: an unknown value is simply not applied."""

    metric = forms.ChoiceField(
        label=_("Metric"),
        required=False,
        choices=[
            ("accuracy", _("Accuracy")),
            ("latency", _("p50 latency")),
            ("cost", _("Cost per success")),
        ],
    )
    market = forms.ChoiceField(label=_("Market"), required=False)
    family = forms.ChoiceField(label=_("Family"), required=False)
    verification = forms.ChoiceField(
        label=_("Verification"),
        required=False,
        choices=[("", _("Any"))] + list(Verification.choices),
    )

    def __init__(self, data, markets, families):
        super().__init__(data)
        self.fields["market"].choices = [("", _("Any"))] + [(m.code, m.name) for m in markets]
        self.fields["family"].choices = [("", _("Any"))] + [(f.slug, f.label) for f in families]

    def filters(self):
        self.is_valid()
        return {
            name: self.cleaned_data.get(name) or ""
            for name in self.fields
            if name not in self.errors
        }


def _slice_reasons(cells, key):
    """Per market or family: how many cells, and which blockers hold them back."""
    slices = {}
    for cell in cells:
        label = key(cell)
        entry = slices.setdefault(label, {"label": label, "cells": 0, "blockers": Counter()})
        entry["cells"] += 1
        entry["blockers"].update(cell.reasons)
    for entry in slices.values():
        entry["reasons"] = [
            {**presenters.blocker_view(code), "count": count}
            for code, count in sorted(entry["blockers"].items())
        ]
    return list(slices.values())


METRIC_ORDER = {
    # (sort key, best first when descending)
    "accuracy": (lambda c: c.accuracy, True),
    "latency": (lambda c: c.p50_seconds if c.p50_seconds is not None else float("inf"), False),
    "cost": (
        lambda c: c.cost_per_success_usd if c.cost_per_success_usd is not None else float("inf"),
        False,
    ),
}


def _ranked(cells, metric):
    """Cells ordered by the metric; a rank only where the accuracy intervals separate them."""
    key, descending = METRIC_ORDER[metric]
    ordered = sorted(cells, key=key, reverse=descending)
    ranks = (
        scoring.separable_ranks([(c.cell_id, (c.accuracy_low, c.accuracy_high)) for c in ordered])
        if metric == "accuracy"
        else {}
    )
    return [
        {
            "cell": c,
            "rank": ranks.get(c.cell_id),
            "reliability": presenters.reliability_view(c.reliability),
        }
        for c in ordered
    ]


@require_safe
def results(request):
    markets, families = list(market_list()), list(family_list())
    form = ResultsFilter(request.GET, markets, families)
    filters = form.filters()
    cells = every_cell = list(cell_list())
    if filters.get("market"):
        cells = [c for c in cells if c.market.code == filters["market"]]
    if filters.get("family"):
        cells = [c for c in cells if c.family.slug == filters["family"]]
    if filters.get("verification"):
        cells = [c for c in cells if c.verification == filters["verification"]]
    metric = filters.get("metric") or "accuracy"
    eligible = _ranked([c for c in cells if c.eligible], metric)
    analysis = _sensitivity(every_cell, filters, markets, families) if eligible else []
    return render(
        request,
        "governance/results.html",
        {
            "form": ResultsFilter(filters, markets, families),
            "cells": cells,
            "eligible": eligible,
            "metric": metric,
            "by_market": _slice_reasons(cells, lambda c: c.market.name),
            "by_family": _slice_reasons(cells, lambda c: c.family.label),
            "demo": any(c.data_status != DataStatus.OFFICIAL for c in cells),
            "sensitivity": analysis,
        },
    )


def _sensitivity(cells, filters, markets, families):
    """The published analysis over every cell (a market figure needs all of a snapshot's
    cells), its tables narrowed to the slice chosen."""
    tables = [
        table
        for table in gate_sensitivity(cells, codes=[market.code for market in markets])
        if (not filters.get("market") or table["market"] in (None, filters["market"]))
        and (not filters.get("family") or table["family"] in (None, filters["family"]))
    ]
    labels = {}
    for cell in cells:
        labels[cell.cell_id] = labels[snapshot_id(cell.snapshot)] = str(cell.snapshot)
    return presenters.sensitivity_charts(
        tables,
        labels,
        {m.code: m.name for m in markets},
        {f.slug: f.label for f in families},
    )


@require_safe
def system_list(request):
    systems = System.objects.prefetch_related("snapshots").order_by("name")
    return render(request, "governance/system_list.html", {"systems": systems})


@require_safe
def system_detail(request, slug):
    try:
        system = System.objects.prefetch_related("snapshots").get(slug=slug)
    except System.DoesNotExist as missing:
        raise Http404 from missing
    cells = list(cell_list().filter(snapshot__system=system))
    canonical = canonical_tasks()
    family_labels = {cell.family.slug: cell.family.label for cell in cells}
    figures = []
    for snapshot in system.snapshots.all():
        mine = [c for c in cells if c.snapshot_id == snapshot.pk]
        result = snapshot_aggregates(mine, canonical)
        # Seed: "memory declared but not exercised is recorded as such".
        snapshot.memory_record = presenters.memory_text(presenters.memory_summary(mine))
        figures.append(
            {
                "snapshot": snapshot,
                "markets": [aggregate_view(code, a) for code, a in result["markets"].items()],
                "families": [
                    aggregate_view(family_labels.get(slug, slug), a)
                    for slug, a in result["families"].items()
                ],
            }
        )
    return render(
        request,
        "governance/system_detail.html",
        {
            "system": system,
            "cells": [presenters.cell_view(c) for c in cells],
            "figures": figures,
            "demo": any(s.data_status != DataStatus.OFFICIAL for s in system.snapshots.all()),
        },
    )


@require_safe
def evidence_list(request):
    cells = [presenters.cell_view(c) for c in cell_list()]
    return render(
        request,
        "governance/evidence_list.html",
        {"cells": cells, "demo": any(c["demo"] for c in cells)},
    )


@require_safe
def evidence_detail(request, cell_id):
    try:
        cell = cell_get(cell_id)
    except GateCell.DoesNotExist as missing:
        raise Http404 from missing
    in_cell = Attempt.objects.filter(snapshot=cell.snapshot, market=cell.market, family=cell.family)
    # Lineage names public tasks only; attempts on holdout tasks are counted, not listed.
    public = Q(task_version__definition__task_set=TaskSet.PUBLIC)
    attempts = list(
        in_cell.filter(public)
        # A run on a fallback without an accepted outage is kept and not counted, with why.
        .annotate(
            fallback_unjustified=Case(
                When(~FALLBACK_JUSTIFIED, then=True), default=False, output_field=BooleanField()
            ),
            # What the API's receipt says as `scored`, by the same condition.
            scored=Case(When(COUNTED, then=True), default=False, output_field=BooleanField()),
        )
        .select_related("task_version__definition")
        .prefetch_related("invocations", "evidence", "situations", "invalidations__reversal")
        .order_by("attempt_id")
    )
    for attempt in attempts:
        attempt.proximity = presenters.attempt_proximity(attempt)
    return render(
        request,
        "governance/evidence_detail.html",
        {
            **presenters.cell_view(cell),
            "attempts": attempts,
            "holdout_attempts": in_cell.exclude(public).count(),
        },
    )


@require_safe
def governance(request):
    current = list(disclosure_current())
    return render(
        request,
        "governance/governance.html",
        {
            "disclosures": [{"statement": s, "stale": is_stale(s)} for s in current],
            "history": disclosure_history(),
            "rights": DecisionRight.objects.all(),
            "refusals": Refusal.objects.all(),
            "independence": IndependenceItem.objects.all(),
            "roles": RoleDisclosure.objects.all(),
            "corrections": correction_log(),
            "withdrawals": withdrawal_log(),
        },
    )


def _appeal_key_fits(token, challenge):
    """Whether `token` is the challenger's appeal key for this challenge: signed with the
    appeal salt and naming this challenge (a key to another challenge opens nothing)."""
    try:
        data = signing.loads(token, salt=APPEAL_SALT)
    except signing.BadSignature:
        return False
    return isinstance(data, dict) and data.get("challenge") == challenge.pk


@never_cache
@require_http_methods(["GET", "POST"])
def challenge_appeal(request, pk):
    """The challenger's appeal against a decided challenge, through the link mailed with
    the decision; the grounds are public. Without that link nothing is filed."""
    try:
        challenge = challenge_public_get(pk)
    except Challenge.DoesNotExist as missing:
        raise Http404 from missing
    token = (request.POST.get("token") or request.GET.get("token") or "")[:500]
    if not _appeal_key_fits(token, challenge):
        refusal = _(
            "Only the challenger can appeal this decision, through the link in the e-mail "
            "that told them of it. This request did not carry that link, so nothing was filed."
        )
        return render(
            request,
            "submissions/challenge_detail.html",
            {"challenge": challenge, "appeal_error": refusal},
            status=403,
        )
    context = {"challenge": challenge, "appeal_token": token}
    if request.method == "GET":
        return render(request, "submissions/challenge_detail.html", context)
    error = None
    if not intake_allowed(address=client_address(request), email=""):
        error = _("Too many filings in the last hour; please try again later.")
    else:
        try:
            appeal_file(challenge=challenge, grounds=request.POST.get("grounds", "")[:20_000])
        except DomainError as refused:
            error = refused.message
    if error is None:
        return redirect("submissions:challenge", pk=challenge.pk)
    return render(
        request,
        "submissions/challenge_detail.html",
        {**context, "appeal_error": error, "grounds": request.POST.get("grounds", "")[:20_000]},
        status=400,
    )
