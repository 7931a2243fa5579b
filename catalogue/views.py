from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from catalogue import presenters
from catalogue.forms import TaskFilterForm
from catalogue.models import TaskDefinition
from catalogue.selectors import (
    family_list,
    review_list,
    task_catalogue_list,
    task_filter,
    task_public_get,
    task_versions,
)


@require_safe
def task_list(request):
    families = list(family_list())
    form = TaskFilterForm(request.GET, families=families)
    filters = form.filters()
    cards = presenters.list_cards(task_filter(task_catalogue_list(), **filters))
    everything = (
        cards
        if not any(filters.values())
        else [presenters.task_card(d) for d in task_catalogue_list()]
    )
    by_family = {family.pk: [] for family in families}
    for card in cards:
        by_family[card["definition"].family_id].append(card)
    return render(
        request,
        "catalogue/task_list.html",
        {
            "form": TaskFilterForm(None, families=families, initial=filters),
            "filtered": any(filters.values()),
            "families": [{"family": f, "cards": by_family[f.pk]} for f in families],
            "shown": len(cards),
            "balance": presenters.balance(everything),
        },
    )


@require_safe
def task_detail(request, slug):
    try:
        definition = task_public_get(slug)
    except TaskDefinition.DoesNotExist as missing:
        raise Http404 from missing
    card = presenters.task_card(definition)
    return render(
        request,
        "catalogue/task_detail.html",
        {
            **card,
            "versions": task_versions(definition),
            "reviews": review_list(definition.current_version),
            "exposures": definition.exposures.all(),
        },
    )
