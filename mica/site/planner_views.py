"""The scope planner page and its manifest download."""

from html import escape  # Django's escape, without its lazy-string wrapper on each call

from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_safe

from catalogue.models import Applicability
from mica.content.fragments import computed
from mica.methodology.selectors import edition_current, edition_stamp
from mica.site import planner
from mica.site.planner import ScopeMode

PAGE_TEMPLATE = "site/evaluate.html"
BODY_TEMPLATE = "site/_evaluate.html"
MODE_HINTS = {
    ScopeMode.COUNTRY_FOCUSED: _("The markets you choose × every public task."),
    ScopeMode.TASK_FOCUSED: _("Every market × the tasks you choose."),
    ScopeMode.CUSTOM_MATRIX: _("The markets you choose × the tasks you choose."),
    ScopeMode.FULL_BENCHMARK: _("Every market × every public task."),
}
# Field name -> (message, id prefix of the checkboxes the error summary links to).
FIELD_ERRORS = {
    "market": (_("Select at least one market."), "market-"),
    "task": (_("Select at least one task."), "task-"),
}


def _scope(request):
    source = planner.planner_source()
    selection = planner.selection_from_query(request.GET, source.records)
    return source, planner.scope_plan(selection, source.records)


def _mode_options(selection):
    return [
        {
            "value": value,
            "label": label,
            "hint": MODE_HINTS[value],
            "checked": value == selection.mode,
        }
        for value, label in ScopeMode.choices
    ]


def _market_options(source, selection):
    return [{"market": m, "checked": m.code in selection.markets} for m in source.markets]


# One task's checkbox. A catalogue of ten thousand tasks is ten thousand of them, which a
# template loop takes seconds to write; each is written here, escaped as the template
# would escape it.
TASK_CHECK = (
    '<li><input type="checkbox" name="task" id="task-{slug}" value="{slug}" '
    'data-applies="{applies}" data-title="{title}"{checked}>\n'
    '          <label for="task-{slug}">{title} <code>{slug}</code></label></li>'
)


def _task_groups(source, selection):
    """Tasks grouped by family, each with the markets it applies to (the script counts
    with it): each group's label and its checkboxes as HTML."""
    records, groups = source.records, []
    chosen = set(selection.tasks)
    # records.applies(), without a call for each of sixty thousand cells.
    status_of, none = records.applicability.get, Applicability.NOT_APPLICABLE
    for task in source.tasks:
        if not groups or groups[-1]["family_id"] != task.family_id:
            groups.append({"family_id": task.family_id, "label": task.family_label, "tasks": []})
        applies = [m for m in records.markets if status_of((m, task.slug), none) != none]
        slug = escape(task.slug)
        groups[-1]["tasks"].append(
            TASK_CHECK.format(
                slug=slug,
                title=escape(task.title),
                applies=escape(" ".join(applies)),
                checked=" checked" if task.slug in chosen else "",
            )
        )
    for group in groups:
        group["checks"] = mark_safe("\n        ".join(group.pop("tasks")))  # each escaped above
    return groups


def _errors(source, scope):
    first = {"market": source.records.markets[:1], "task": source.records.tasks[:1]}
    errors = []
    for name, (message, prefix) in FIELD_ERRORS.items():
        anchor = prefix + first[name][0] if first[name] else ""
        errors.append(
            {"field": name, "message": message, "anchor": anchor, "shown": name in scope.missing}
        )
    return errors


def _not_applicable_cells(source, scope):
    market_of = {m.code: m for m in source.markets}
    title_of = {t.slug: t.title for t in source.tasks}
    return [
        {"market": market_of[cell.market], "task": cell.task, "title": title_of[cell.task]}
        for cell in scope.cells
        if not cell.execution_eligible
    ]


@require_safe
def evaluate(request):
    if request.GET:
        # A reader's own scope is theirs to invent: only the page everyone starts
        # from is kept, so made-up queries cannot fill the fragment cache.
        context = _evaluate_context(request.GET)
        return render(request, PAGE_TEMPLATE, {**context, "scope_valid": context["scope"].valid})
    valid, body = computed("site-evaluate", _initial_body)
    return render(request, PAGE_TEMPLATE, {"scope_valid": valid, "body": body})


def _initial_body():
    """Whether the initial scope is valid (the title says so) and the page's body as HTML."""
    context = _evaluate_context({})
    # Rendered apart from the page, the body does not see the shell's edition.
    context["current_edition"] = edition_stamp()
    return context["scope"].valid, mark_safe(render_to_string(BODY_TEMPLATE, context))


def _evaluate_context(query_data):
    source = planner.planner_source()
    selection = planner.selection_from_query(query_data, source.records)
    scope = planner.scope_plan(selection, source.records)
    query = planner.selection_query(scope.selection)
    return {
        "scope": scope,
        "counts": planner.scope_counts(scope),
        "modes": _mode_options(scope.selection),
        "market_options": _market_options(source, scope.selection),
        "task_groups": _task_groups(source, scope.selection),
        "errors": _errors(source, scope),
        "not_applicable_cells": _not_applicable_cells(source, scope),
        "manifest_url": f"{reverse('site:evaluate-manifest')}?{query}",
    }


@require_safe
def scope_manifest(request):
    """The frozen scope as JSON; an empty scope is a 400 with the reasons in the reader's words."""
    _source, scope = _scope(request)
    if not scope.valid:
        errors = {name: [str(FIELD_ERRORS[name][0])] for name in scope.missing}
        return JsonResponse(
            {"errors": errors}, status=400, json_dumps_params={"ensure_ascii": False}
        )
    edition = edition_current()
    manifest = planner.scope_manifest(scope, edition)
    response = JsonResponse(manifest, json_dumps_params={"ensure_ascii": False, "indent": 2})
    edition_slug = edition.slug if edition else "no-edition"
    filename = f"mica-scope-{edition_slug}-{scope.selection.mode}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
