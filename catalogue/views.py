from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from catalogue import presenters
from catalogue.forms import TaskFilterForm
from catalogue.selectors import (
    family_list,
    task_catalogue_headings,
    task_filter,
    task_pages_read,
)
from mica.content.fragments import computed, computed_many

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


def task_details_prepare(slugs):
    """Make the bodies of many task pages in one read (the bake renders them by the
    hundred), each kept as the fragment its page then finds."""
    computed_many("catalogue-task-detail", _task_details, slugs)


def _task_detail(slug):
    """The task's title (it titles the page) and the page's body as HTML."""
    try:
        return _task_details([slug])[slug]
    except KeyError as missing:
        raise Http404 from missing


def _task_details(slugs):
    """{slug: (title, body)} of the public tasks among `slugs`."""
    details = {}
    for definition in task_pages_read(slugs):
        card = presenters.task_card(definition)
        context = {
            **card,
            "versions": definition.versions_newest,
            "reviews": definition.current_version.reviews_shown,
            "exposures": definition.exposures.all(),
        }
        body = mark_safe(render_to_string(DETAIL_TEMPLATE, context))
        details[definition.slug] = (card["version"].title, body)
    return details
