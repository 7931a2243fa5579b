"""The planner's task checkboxes, written without a template loop (issue 31, item 1: a
page listing every task must re-render cheaply after one task's edit): each reads as the
template wrote it, in the reader's language, escaped, ticked when chosen."""

import re

import pytest

from catalogue.models import TaskDefinition

pytestmark = pytest.mark.django_db

TASK = "ec-reschedule-three-party"


def checkbox(html, slug):
    found = re.search(
        rf'<li><input type="checkbox" name="task" id="task-{slug}" value="{slug}" '
        r'data-applies="([^"]*)" data-title="([^"]*)"( checked)?>\s*'
        rf'<label for="task-{slug}">([^<]*) <code>{slug}</code></label></li>',
        html,
    )
    assert found, slug
    return found.groups()


def test_each_task_is_offered_with_its_title_in_the_reader_s_language(client, canonical_content):
    version = TaskDefinition.objects.get(slug=TASK).current_version
    _applies, english, _checked, label = checkbox(client.get("/evaluate/").text, TASK)
    assert english == label == version.title_en
    _applies, korean, _checked, label = checkbox(client.get("/ko/evaluate/").text, TASK)
    assert korean == label == version.title_ko != version.title_en
    assert "<legend>이메일·캘린더</legend>" in client.get("/ko/evaluate/").text


def test_a_title_is_escaped_where_it_is_written(client, canonical_content):
    version = TaskDefinition.objects.get(slug=TASK).current_version
    version.title_en = 'Pay <b>"now"</b> & later'
    version.save()
    html = client.get("/evaluate/").text
    _applies, title, _checked, label = checkbox(html, TASK)
    assert title == label == "Pay &lt;b&gt;&quot;now&quot;&lt;/b&gt; &amp; later"
    assert "<b>" not in html


def test_a_chosen_task_is_ticked_and_the_markets_it_applies_in_are_named(client, canonical_content):
    html = client.get(f"/evaluate/?mode=task-focused&task={TASK}").text
    applies, _title, checked, _label = checkbox(html, TASK)
    assert checked == " checked" and applies.split() == ["KR", "JP", "SG", "TW", "AE", "TH"]
    slugs = TaskDefinition.objects.filter(task_set="public").exclude(slug=TASK)
    other = slugs.order_by("slug").values_list("slug", flat=True)[0]
    assert checkbox(html, other)[2] is None
