from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from catalogue import presenters
from catalogue.forms import TaskFilterForm
from catalogue.models import TaskDefinition
from catalogue.selectors import (
    family_list,
    review_list,
    task_catalogue_headings,
    task_filter,
    task_public_get,
    task_versions,
)
from mica.content.fragments import computed

LIST_TEMPLATE = "catalogue/_task_list.html"
DETAIL_TEMPLATE = "catalogue/_task_detail.html"


@require_safe
def task_list(request):
    if request.GET:
        body = _task_list_body(request.GET)
    else:
        # The whole catalogue, as most readers ask for it, is kept as one fragment; its
        # rows are fragments of their own, so an edit re-renders only the edited row.
        body = computed("catalogue-task-list", lambda: _task_list_body(request.GET))
    return render(request, "catalogue/task_list.html", {"body": body})


def _task_list_body(query):
    families = list(family_list())
    form = TaskFilterForm(query, families=families)
    filters = form.filters()
    definitions = list(task_filter(task_catalogue_headings(), **filters))
    rows = dict(zip(definitions, presenters.task_rows(definitions), strict=True))
    by_family = {family.pk: [] for family in families}
    for definition, row in rows.items():
        by_family[definition.family_id].append(row)
    context = {
        "form": TaskFilterForm(None, families=families, initial=filters),
        "filtered": any(filters.values()),
        "families": [{"family": f, "rows": by_family[f.pk]} for f in families],
        "shown": len(definitions),
        "balance": presenters.balance_figures(),
    }
    return mark_safe(render_to_string(LIST_TEMPLATE, context))


@require_safe
def task_detail(request, slug):
    title, body = computed("catalogue-task-detail", lambda: _task_detail(slug), slug)
    return render(request, "catalogue/task_detail.html", {"title": title, "body": body})


def _task_detail(slug):
    """The task's title (it titles the page) and the page's body as HTML."""
    try:
        definition = task_public_get(slug)
    except TaskDefinition.DoesNotExist as missing:
        raise Http404 from missing
    card = presenters.task_card(definition)
    context = {
        **card,
        "versions": task_versions(definition),
        "reviews": review_list(definition.current_version),
        "exposures": definition.exposures.all(),
    }
    return card["version"].title, mark_safe(render_to_string(DETAIL_TEMPLATE, context))
