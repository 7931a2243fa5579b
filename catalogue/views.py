from collections import Counter
from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from catalogue import presenters
from catalogue.forms import TaskFilterForm
from catalogue.models import Lifecycle
from catalogue.selectors import (
    catalogue_balance_counts,
    family_list,
    task_catalogue_headings,
    task_catalogue_list,
    task_catalogue_order,
    task_family_counts,
    task_filter,
    task_pages_read,
)
from mica.content.fragments import computed, computed_many

LIST_TEMPLATE = "catalogue/_task_list.html"
DETAIL_TEMPLATE = "catalogue/_task_detail.html"
PAGE_PARAMETER = "page"
# Pages of the whole catalogue kept as fragments: beyond it a number is a reader's own
# invention (the listing shows its last page), which must not fill the fragment cache.
KEPT_PAGES = 1000
# Page links shown either side of the current one, besides the first and the last.
PAGE_LINKS_AROUND = 2


def catalogue_page_size():
    """Tasks a page of the catalogue lists: a page stays the same size however large the
    catalogue grows, so one task's edit renders one page of it again."""
    return settings.CATALOGUE_PAGE_SIZE


def page_requested(query):
    """The page a query asks for: 1 unless `page` is a whole number above zero."""
    value = query.get(PAGE_PARAMETER, "")
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else 1


@require_safe
def task_list(request):
    number = page_requested(request.GET)
    if any(key != PAGE_PARAMETER for key in request.GET) or number > KEPT_PAGES:
        title, page_query, body = _task_list_body(request.GET, number)
    else:
        # A page of the whole catalogue, as most readers ask for it, is kept as one
        # fragment; its rows are fragments of their own, so an edit re-renders only the
        # edited row.
        title, page_query, body = computed(
            "catalogue-task-list", lambda: _task_list_body(request.GET, number), number
        )
    context = {"title": title, "page_query": page_query, "body": body}
    return render(request, "catalogue/task_list.html", context)


def task_list_url(filters, number):
    """The address of page `number` of the catalogue under `filters` (valid ones only)."""
    pairs = [(name, value) for name, value in filters.items() if value]
    if number > 1:
        pairs.append((PAGE_PARAMETER, number))
    query = urlencode(pairs)
    return reverse("catalogue:task-list") + (f"?{query}" if query else "")


def _page_links(filters, page):
    """The first, the last and the pages around the current one, with a gap between."""
    last, current = page.paginator.num_pages, page.number
    numbers = sorted(
        {1, last} | set(range(current - PAGE_LINKS_AROUND, current + PAGE_LINKS_AROUND + 1))
    )
    links, previous = [], 0
    for number in numbers:
        if not 1 <= number <= last:
            continue
        if number > previous + 1:
            links.append({"gap": True})
        links.append(
            {"number": number, "url": task_list_url(filters, number), "current": number == current}
        )
        previous = number
    return links


def _family_groups(families, counts, rows_by_family, filters, page):
    """The families this page shows, and each family's link in the contents: to its own
    section on the page where its first task is listed."""
    size, start, groups, toc = page.paginator.per_page, 0, [], []
    for family in families:
        count = counts.get(family.pk, 0)
        # A family no task of the filters falls in is said so on the first page.
        number = start // size + 1 if count else 1
        start += count
        anchor = f"#{family.slug}"
        url = anchor if number == page.number else task_list_url(filters, number) + anchor
        toc.append({"family": family, "url": url})
        rows = rows_by_family.get(family.pk, [])
        if rows or (not count and page.number == 1):
            groups.append({"family": family, "rows": rows, "continued": number < page.number})
    return groups, toc


def _lifecycle_counts():
    """What the public catalogue holds, in one query: its definitions, and how many of them
    are candidates and how many validated (the counts the methodology's prose states)."""
    return task_catalogue_list().aggregate(
        canonical_task_count=Count("pk"),
        candidate_task_count=Count("pk", filter=Q(lifecycle=Lifecycle.CANDIDATE)),
        validated_task_count=Count("pk", filter=Q(lifecycle=Lifecycle.VALIDATED)),
    )


def _task_list_body(query, number):
    """The page's title, the query its own address carries (a later page of the whole
    catalogue) and its body as HTML: page `number` of the tasks the filters in `query`
    select."""
    families = list(family_list())
    form = TaskFilterForm(query, families=families)
    filters = form.filters()
    listed = task_filter(task_catalogue_headings(), **filters)
    page = Paginator(listed, catalogue_page_size()).get_page(number)
    definitions = list(page.object_list)
    rows_by_family = {}
    for definition, row in zip(definitions, presenters.task_rows(definitions), strict=True):
        rows_by_family.setdefault(definition.family_id, []).append(row)
    counts = task_family_counts(listed)
    groups, toc = _family_groups(families, counts, rows_by_family, filters, page)
    paginated = page.paginator.num_pages > 1
    context = {
        "form": TaskFilterForm(None, families=families, initial=filters),
        "filtered": any(filters.values()),
        "families": groups,
        "toc": toc,
        "shown": page.paginator.count,
        "page": page,
        "paginated": paginated,
        "range": {
            "first": f"{page.start_index():,}",
            "last": f"{page.end_index():,}",
            "total": f"{page.paginator.count:,}",
        },
        "page_links": _page_links(filters, page) if paginated else [],
        "previous_url": task_list_url(filters, page.number - 1) if page.has_previous() else "",
        "next_url": task_list_url(filters, page.number + 1) if page.has_next() else "",
        "balance": presenters.balance_figures(),
        # The lead says what the catalogue holds: candidates only, or some validated.
        "lifecycle": _lifecycle_counts(),
    }
    title = _("Tasks")
    if paginated:
        title = _("Tasks, page %(number)d of %(count)d") % {
            "number": page.number,
            "count": page.paginator.num_pages,
        }
    whole_later = page.number > 1 and not context["filtered"]
    page_query = f"?{PAGE_PARAMETER}={page.number}" if whole_later else ""
    return title, page_query, mark_safe(render_to_string(LIST_TEMPLATE, context))


def task_list_window(query, reads):
    """What a page of the whole catalogue shows of the task tables, as the bake compares
    it (mica.site.bake.WINDOW_VIEWS): the tasks it lists, and besides their rows how many
    tasks each family has (its status line, its contents, its pages) and the balance's
    counts. None for a filtered page, which the bake never bakes. `reads` keeps what
    was read for the other pages of the same bake: two queries for all of them."""
    if any(key != PAGE_PARAMETER for key in query):
        return None
    if not reads:
        reads["order"] = task_catalogue_order()
        reads["families"] = sorted(Counter(family for _slug, family in reads["order"]).items())
        reads["balance"] = sorted(
            [*cell, count] for cell, count in catalogue_balance_counts().items()
        )
    page = Paginator(reads["order"], catalogue_page_size()).get_page(page_requested(query))
    keys = [slug for slug, _family in page.object_list]
    return keys, {"page": page.number, "families": reads["families"], "balance": reads["balance"]}


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
