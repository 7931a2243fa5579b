"""The catalogue in pages (issue 31, item 1): `/tasks/` lists a bounded number of tasks a
page, so a page, and the bake after one task's edit, stay the same size however large the
catalogue grows. Every page is reachable by links (rel=prev/next, each page's number),
says which tasks it shows of how many in both languages, and keeps the filters."""

import re

import pytest

from catalogue.models import TaskDefinition, TaskSet
from catalogue.selectors import task_catalogue_list
from tests.mica.methodology.test_korean_seed import html_text

pytestmark = pytest.mark.django_db

SIZE = 30


@pytest.fixture
def paged(settings, canonical_content):
    settings.CATALOGUE_PAGE_SIZE = SIZE
    return list(task_catalogue_list().values_list("slug", flat=True))


def listed(body):
    """The tasks a catalogue page lists, in its order."""
    return re.findall(r'<article class="task" aria-labelledby="task-([a-z0-9-]+)"', body)


def test_each_page_lists_its_share_of_the_catalogue_in_order(client, paged):
    assert len(paged) == 100
    pages = [client.get("/tasks/" + (f"?page={n}" if n > 1 else "")).text for n in range(1, 5)]
    assert [len(listed(page)) for page in pages] == [30, 30, 30, 10]
    assert sum((listed(page) for page in pages), []) == paged
    assert "Tasks 31–60 of 100." in html_text(pages[1])
    assert "Tasks 91–100 of 100." in html_text(pages[3])
    korean = html_text(client.get("/ko/tasks/?page=2").text)
    assert "과제 100개 중 31–60번째입니다." in korean


def test_pages_link_to_each_other_with_rel_prev_next_and_mark_the_current_one(client, paged):
    body = client.get("/ko/tasks/?page=2").text
    assert '<a href="/ko/tasks/" rel="prev">' in body
    assert '<a href="/ko/tasks/?page=3" rel="next">' in body
    current = re.findall(r'<a href="([^"]+)" aria-label="([^"]+)" aria-current="page">2</a>', body)
    # The list of pages is given above and below the tasks, each a named navigation.
    assert current == [("/ko/tasks/?page=2", "2쪽")] * 2
    assert 'aria-label="카탈로그 쪽 목록"' in body
    assert "<title>과제, 4쪽 중 2쪽 — MICA</title>" in body
    first, last = client.get("/tasks/").text, client.get("/tasks/?page=4").text
    assert 'rel="prev"' not in first and 'rel="next"' in first
    assert 'rel="next"' not in last and 'rel="prev"' in last


def test_a_later_page_is_its_own_canonical_address_in_both_languages(client, paged, settings):
    body = client.get("/tasks/?page=3").text
    site = settings.SITE_URL
    assert f'<link rel="canonical" href="{site}/tasks/?page=3">' in body
    assert f'hreflang="ko" href="{site}/ko/tasks/?page=3"' in body
    assert f'<link rel="canonical" href="{site}/tasks/">' in client.get("/tasks/").text


def test_the_contents_lead_to_the_page_each_family_starts_on(client, paged):
    families = dict(
        TaskDefinition.objects.filter(task_set=TaskSet.PUBLIC).values_list("slug", "family__slug")
    )
    body = client.get("/tasks/?page=2").text
    starts = {}
    for index, slug in enumerate(paged):
        starts.setdefault(families[slug], index // SIZE + 1)
    assert len(starts) == 10
    for family, number in starts.items():
        address = "#" if number == 2 else ("/tasks/#" if number == 1 else f"/tasks/?page={number}#")
        assert f'href="{address}{family}"' in body, family


def test_a_family_begun_on_an_earlier_page_says_it_goes_on(client, paged, settings):
    settings.CATALOGUE_PAGE_SIZE = 25  # ten tasks a family: page 2 starts inside one
    body = client.get("/tasks/?page=2").text
    headings = re.findall(r'<h2 id="([a-z-]+)">\d+\. [^<]+(<span class="continued">)?', body)
    assert [bool(span) for _family, span in headings] == [True, False, False]
    korean = client.get("/ko/tasks/?page=2").text
    assert '<span class="continued">(이어서)</span>' in korean


def test_filters_keep_across_pages(client, paged):
    every = client.get("/tasks/?lifecycle=candidate").text
    count = int(re.search(r"Tasks 1–30 of (\d+)\.", html_text(every)).group(1))
    assert count > SIZE
    second = client.get("/tasks/?lifecycle=candidate&page=2").text
    assert '<a href="/tasks/?lifecycle=candidate&amp;page=3" rel="next">' in second or count <= 60
    assert '<a href="/tasks/?lifecycle=candidate" rel="prev">' in second
    shown = listed(second)
    assert shown and set(shown) <= set(
        TaskDefinition.objects.filter(lifecycle="candidate").values_list("slug", flat=True)
    )
    assert not set(shown) & set(listed(every))


@pytest.mark.parametrize("value", ["abc", "0", "-1", "2.5", "", "٣", "1e3"])
def test_a_page_number_that_is_not_one_shows_the_first_page(client, paged, value):
    response = client.get(f"/tasks/?page={value}")
    assert response.status_code == 200
    assert listed(response.text) == paged[:SIZE]


@pytest.mark.parametrize("value", ["9", "1001", "99999999999999999999"])
def test_a_page_past_the_last_shows_the_last(client, paged, value):
    response = client.get(f"/tasks/?page={value}")
    assert response.status_code == 200 and listed(response.text) == paged[90:]


def test_one_page_says_how_many_tasks_it_shows_without_page_links(client, canonical_content):
    body = client.get("/tasks/").text
    assert "100 tasks shown." in html_text(body)
    assert 'class="pagination"' not in body and 'rel="next"' not in body


def test_the_sitemap_names_every_page_of_the_catalogue_in_both_languages(client, paged):
    body = client.get("/sitemap.xml").content.decode()
    for number in (2, 3, 4):
        assert f"/tasks/?page={number}</loc>" in body
        assert f"/ko/tasks/?page={number}</loc>" in body
    assert "/tasks/?page=5<" not in body and "/tasks/?page=1<" not in body


def test_a_page_of_the_catalogue_runs_as_many_queries_as_another(
    client, paged, django_assert_max_num_queries
):
    with django_assert_max_num_queries(12):
        client.get("/tasks/?page=3")
    with django_assert_max_num_queries(14):
        client.get("/tasks/?page=2&market=KR")


@pytest.mark.walk
def test_a_later_page_and_a_filtered_one_are_valid_html_in_both_languages(client, paged, tmp_path):
    from tests.mica.site.test_html_validity import vnu_errors

    for name, path in {
        "en-2": "/tasks/?page=2",
        "ko-4": "/ko/tasks/?page=4",
        "en-filtered": "/tasks/?lifecycle=candidate&page=2",
    }.items():
        (tmp_path / f"{name}.html").write_text(client.get(path).text, encoding="utf-8")
    assert not vnu_errors(tmp_path)
