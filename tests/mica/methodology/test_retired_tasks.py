"""A retired task has left the catalogue, and the methodology's figures follow it.

Issue 34, Acceptance: "The methodology's task count equals `/tasks/` after a retirement, in
both languages and both packs." Seed 000 states the count it must follow: "- **[Current rule]
Scope in force.** 6 markets, 10 task families and 100 canonical task definitions."
"""

import re

import pytest

from catalogue.models import TaskDefinition
from catalogue.services import task_retire
from tests.factories import LeadFactory
from tests.mica.methodology.test_korean_seed import html_text
from tests.mica.methodology.test_live_figures import everything


def catalogue_count(client, prefix):
    """The count `/tasks/` states, as its reader reads it."""
    text = html_text(client.get(f"{prefix}/tasks/").text)
    found = re.search(r"(\d+) tasks shown\.|과제 (\d+)개를 표시합니다\.", text)
    assert found, text[:400]
    return int(found.group(1) or found.group(2))


@pytest.mark.django_db
def test_the_methodology_counts_what_the_catalogue_lists_after_a_retirement(
    client, canonical_content, django_capture_on_commit_callbacks
):
    lead = LeadFactory()
    with django_capture_on_commit_callbacks(execute=True):
        task_retire(
            definition_id=TaskDefinition.objects.get(slug="ec-reschedule-three-party").pk,
            actor=lead,
            reason="A duplicate of another task.",
        )
    listed = {prefix: catalogue_count(client, prefix) for prefix in ("", "/ko")}
    assert listed == {"": 99, "/ko": 99}
    texts = everything(client)
    for where in ("pack", "page"):
        english, korean = texts[where, "en"], texts[where, "ko"]
        assert "6 markets, 10 task families and 99 canonical task definitions." in english, where
        assert "All 99 public definitions are provisional candidates" in english, where
        assert "10 task families hold 99 canonical definitions." in english, where
        assert "공개된 99개 정의는 모두 잠정 후보이며" in korean, where
        assert "10개 과제 계열에 99개의 표준 정의가 있습니다." in korean, where
        assert "100 canonical" not in english and "100개의 표준 정의" not in korean, where
    assert (
        "Canonical task definitions: 99 (99 provisional public-set candidates"
        in (texts["pack", "en"])
    )
