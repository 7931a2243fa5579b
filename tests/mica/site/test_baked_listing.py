"""The catalogue's pages in the bake (issue 31, item 1): "the bake after a commit
re-renders only the pages that read a changed row, plus the listings and figures that
depend on them, and copies the rest from the previous build", and "the incremental result
is byte-identical to a full one". A page of `/tasks/` reads the rows of the tasks it
lists and, of the others, only how many there are and the balance's counts: an edit of
one task renders again the page that lists it, not the whole catalogue."""

import pytest

from catalogue.models import TaskDefinition, TaskSurface
from catalogue.selectors import task_catalogue_list
from catalogue.services import task_retire
from mica.site.bake import BakeRefused, bake_published, page_file, pages_bake
from tests.factories import LeadFactory
from tests.mica.site import test_baked_pages as baked
from tests.mica.site.test_baked_pages import _outcome, get, manifest

# The fixtures of the baked pages' tests, shared.
baking, django_app, site = baked.baking, baked.django_app, baked.site

pytestmark = pytest.mark.django_db

SIZE = 30
LISTING = [
    f"{prefix}/tasks/{query}"
    for prefix in ("", "/ko")
    for query in ("", "?page=2", "?page=3", "?page=4")
]


@pytest.fixture
def paged(settings, baking):
    settings.CATALOGUE_PAGE_SIZE = SIZE
    return list(task_catalogue_list().values_list("slug", flat=True))


def version_change(slug, **values):
    def change():
        version = TaskDefinition.objects.get(slug=slug).current_version
        for name, value in values.items():
            setattr(version, name, value)
        version.save()

    return change


def changed_pages(before, after):
    return {
        path for path, page in after["pages"].items() if page["sha256"] != before[path]["sha256"]
    }


@pytest.mark.vendor
def test_a_later_page_of_the_catalogue_is_baked_and_answered_from_its_file(paged, site, django_app):
    made = pages_bake(paths=LISTING)
    assert sorted(made["pages"]) == sorted(LISTING)
    assert made["pages"]["/tasks/?page=3"]["file"] == "tasks/index.page=3.html"
    answer = get(site, "/ko/tasks/?page=3")
    assert answer.status == 200 and paged[60] in answer.body.decode()
    assert django_app.paths == []
    # Any other query is the reader's own: Django answers it.
    for query in ("page=3&family=email-calendar", "page=03", "page=5"):
        assert get(site, f"/tasks/?{query}").status == 200
    assert django_app.paths == ["/tasks/"] * 3


@pytest.mark.vendor
def test_a_task_edit_renders_the_page_that_lists_it_and_no_other_page_of_the_catalogue(
    paged, baking, site, django_app
):
    pages_bake(paths=LISTING)
    before = manifest()["pages"]
    edited = paged[70]  # on the third page
    title = "A title the third page alone shows"
    baking(version_change(edited, title_en=title, title_ko=f"{title} (한국어)"))
    after = pages_bake(paths=LISTING)
    assert after["rendered"] == 2
    assert changed_pages(before, after) == {"/tasks/?page=3", "/ko/tasks/?page=3"}
    assert "A title the third page alone shows" in get(site, "/tasks/?page=3").body.decode()
    assert django_app.paths == []
    full = _outcome(lambda: pages_bake(paths=LISTING, full=True, publish=False))
    assert full == _outcome(manifest)


@pytest.mark.vendor
def test_an_edit_that_changes_a_count_renders_every_page_that_shows_it(paged, baking):
    """The balance on each page counts tasks by surface: a task's new surface moves a
    figure every page shows."""
    pages_bake(paths=LISTING)
    edited = paged[70]
    surface = TaskDefinition.objects.get(slug=edited).current_version.surface
    other = next(code for code, _label in TaskSurface.choices if code != surface)
    baking(version_change(edited, surface=other))
    incremental = _outcome(lambda: pages_bake(paths=LISTING))
    assert manifest()["rendered"] == len(LISTING)
    assert incremental == _outcome(lambda: pages_bake(paths=LISTING, full=True, publish=False))


@pytest.mark.vendor
def test_a_task_leaving_the_catalogue_moves_the_pages_after_it_as_a_full_bake_would(paged, baking):
    pages_bake(paths=LISTING)
    before = manifest()["pages"]
    lead = LeadFactory()
    retired = TaskDefinition.objects.get(slug=paged[5])
    baking(lambda: task_retire(definition_id=retired.pk, actor=lead, reason="A duplicate."))
    incremental = _outcome(lambda: pages_bake(paths=LISTING))
    after = manifest()
    assert changed_pages(before, after) == set(LISTING)
    assert incremental == _outcome(lambda: pages_bake(paths=LISTING, full=True, publish=False))
    assert f"task-{paged[5]}" not in bake_published().file("/tasks/").read_text()
    assert f"task-{paged[30]}" in bake_published().file("/tasks/").read_text()


def test_a_location_with_any_other_query_has_no_file_of_its_own():
    assert page_file("/ko/tasks/?page=12") == "ko/tasks/index.page=12.html"
    assert page_file("/") == "index.html"
    for path in ("/tasks/?page=2&x=1", "/tasks/?page=../../x", "/tasks/?page=2/"):
        with pytest.raises(ValueError):
            page_file(path)


@pytest.mark.vendor
def test_a_bake_renders_twice_only_page_types_the_last_bake_did_not_find_steady(
    baking, monkeypatch
):
    """Each page type's first page is rendered twice, to compare (a page that differs per
    render cannot be baked); a bake taking pages from one made with the same code,
    settings and address trusts the types that one compared, and compares new ones."""
    from mica.site import bake as baking_module
    from mica.site import context_processors

    paths = ["/methodology/", "/tasks/", f"/tasks/{baked.TASK}/"]
    pages_bake(paths=paths, full=True)
    steady = manifest()["steady"]
    assert steady == sorted(
        [
            ["methodology:methodology", "en"],
            ["catalogue:task-list", "en"],
            ["catalogue:task-detail", "en"],
        ]
    )
    renders = []
    render = baking_module._Renderer.render

    def counted(self, path):
        renders.append(path)
        return render(self, path)

    monkeypatch.setattr(baking_module._Renderer, "render", counted)
    baking(baked.title_change("A title two pages show"))
    made = pages_bake(paths=paths)
    assert sorted(renders) == ["/tasks/", f"/tasks/{baked.TASK}/"]
    assert made["steady"] == steady
    # A page type new to the bake is still compared: here its shell changes each render.
    numbers = iter(range(10_000))
    pages = context_processors.routed_pages

    def pages_each_time_new(path):
        return [{**page, "label": f"{page['label']} {next(numbers)}"} for page in pages(path)]

    monkeypatch.setattr(context_processors, "routed_pages", pages_each_time_new)
    with pytest.raises(BakeRefused):
        pages_bake(paths=[*paths, "/challenges/"])


@pytest.mark.vendor
def test_the_home_page_renders_again_when_a_count_it_shows_moves_not_for_a_title(baking):
    """The home page counts tasks by family and lifecycle and reads the gate inputs'
    fingerprint; a task's new title moves neither, a retirement moves a count."""
    paths = ["/", "/ko/", f"/tasks/{baked.TASK}/"]
    pages_bake(paths=paths, full=True)
    before = manifest()["pages"]
    baking(baked.title_change("A title the home page does not show"))
    after = pages_bake(paths=paths)
    assert after["rendered"] == 1 and changed_pages(before, after) == {f"/tasks/{baked.TASK}/"}
    full = _outcome(lambda: pages_bake(paths=paths, full=True, publish=False))
    assert full == _outcome(manifest)
    lead = LeadFactory()
    retired = TaskDefinition.objects.get(slug=baked.TASK)
    baking(lambda: task_retire(definition_id=retired.pk, actor=lead, reason="A duplicate."))
    again = pages_bake(paths=paths)
    assert {"/", "/ko/"} <= changed_pages(after["pages"], again)
    assert _outcome(manifest) == _outcome(lambda: pages_bake(paths=paths, full=True, publish=False))
