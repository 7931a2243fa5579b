"""One version, one text, forever; only what was reviewed is public (issue 41, items 1-2).

PORTAL.md: "One version, one text. A validated task version, and every record a
published edition holds, is read-only down to the database; a change is a new version
through review. Only reviewed versions are public." Seed 000: "Speed and cost
references are pre-registered per task version" and an approval "pins a content hash".

Each path a writer can take is tried on the version as the finding found it: validated,
made current, and an edition published that holds it.
"""

import html
import io
import json

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.utils import translation

from catalogue.models import ContractClause, TaskVersion
from catalogue.services import task_version_start_next
from mica.errors import InvalidTransition
from mica.methodology.models import Edition
from mica.methodology.services import edition_publish
from tests.census import form_data

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

VERSIONS = "/admin/catalogue/taskversion/"
UNREVIEWED = "An unreviewed final state the author typed after validation"


def stored_text(version):
    row = TaskVersion.objects.get(pk=version.pk)
    return row.final_state_en, row.idempotency_en, row.content_hash


def public_page(client, task, prefix=""):
    return html.unescape(client.get(f"{prefix}/tasks/{task.slug}/").text)


@pytest.fixture
def current(validated, task):
    """The finding's version: validated on the task's current version, shown on its page."""
    assert task.current_version_id == validated.pk and validated.frozen
    return validated


def test_the_authors_change_form_post_is_refused_and_the_page_keeps_the_approved_text(
    client, people, current, task, django_capture_on_commit_callbacks
):
    """The finding, as the author took it: the change page opened again, the final state
    and the idempotency requirement edited, saved. Nothing changes, on the record or the
    public page, and the page names the version's short content hash."""
    before = stored_text(current)
    url = f"{VERSIONS}{current.pk}/change/"
    client.force_login(people["author"])
    page = client.get(url)
    assert page.status_code == 200
    assert "This version is frozen" in page.text
    assert "Start a new version from this one" in page.text
    data = form_data(page.text, "taskversion_form")
    data.update(final_state_en=UNREVIEWED, idempotency_en="Retry freely.")
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, data).status_code == 403
    assert stored_text(current) == before
    shown = public_page(client, task)
    assert UNREVIEWED not in shown
    assert current.final_state_en in shown
    assert current.content_hash[:12] in shown
    with translation.override("ko"):
        korean = client.get(f"/ko{url}").text
    assert "이 버전은 고정되었습니다" in korean


def test_the_orm_refuses_every_write_of_the_version_and_its_parts(current):
    current.final_state_ko = "검토되지 않은 문장"
    with pytest.raises(InvalidTransition, match="is frozen"):
        current.save()
    with pytest.raises(InvalidTransition):
        TaskVersion.objects.filter(pk=current.pk).update(idempotency_en="Retry freely.")
    clause = current.clauses.first()
    clause.text_en = "A softer obligation."
    with pytest.raises(InvalidTransition):
        clause.save()
    with pytest.raises(InvalidTransition):
        clause.delete()
    with pytest.raises(InvalidTransition):
        ContractClause.objects.create(version=current, kind="invariant", text_en="More.")
    applicability = current.applicability.first()
    applicability.status = "not-applicable"
    with pytest.raises(InvalidTransition):
        applicability.save()
    with pytest.raises(InvalidTransition):
        current.delete()
    with translation.override("ko"), pytest.raises(InvalidTransition) as in_korean:
        TaskVersion.objects.get(pk=current.pk).delete()
    assert "새 버전" in in_korean.value.message


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE catalogue_taskversion SET final_state_en = 'raw' WHERE id = {version}",
        "UPDATE catalogue_taskversion SET frozen_at = NULL WHERE id = {version}",
        "DELETE FROM catalogue_taskversion WHERE id = {version}",
        "UPDATE catalogue_contractclause SET text_ko = 'raw' WHERE version_id = {version}",
        "DELETE FROM catalogue_contractclause WHERE version_id = {version}",
        "INSERT INTO catalogue_contractclause (version_id, kind, position, text, text_en,"
        " text_ko) VALUES ({version}, 'invariant', 9, 'raw', 'raw', 'raw')",
        "UPDATE catalogue_marketapplicability SET status = 'not-applicable'"
        " WHERE version_id = {version}",
    ],
    ids=[
        "text",
        "unfreeze",
        "delete",
        "clause-text",
        "clause-delete",
        "clause-insert",
        "applicability",
    ],
)
def test_raw_sql_is_refused_by_the_database(current, statement):
    """Triggers on both databases; no session setting of the application lifts them."""
    before = stored_text(current), list(current.clauses.values_list("text_en", "text_ko"))
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SET mica.maintenance = 'on'")
            cursor.execute(statement.format(version=current.pk))
    after = stored_text(current), list(current.clauses.values_list("text_en", "text_ko"))
    assert after == before


def test_the_api_has_no_write_for_a_task(client, people, current, task):
    before = stored_text(current)
    client.force_login(people["lead"])
    for method in ("put", "patch", "delete"):
        response = getattr(client, method)(
            f"/api/v1/tasks/{task.slug}/",
            json.dumps({"final_state": UNREVIEWED}),
            content_type="application/json",
        )
        assert response.status_code in (403, 405), method
    assert stored_text(current) == before


def test_a_version_a_published_edition_holds_is_frozen_too(client, people, task):
    """Issue 41: "An edit of a task version that a published edition's catalogue holds is
    refused through every path, like an edit of a validated version." A candidate task's
    current version, never validated, is frozen by the edition's publication."""
    version = TaskVersion.objects.get(pk=task.current_version_id)
    assert not version.frozen
    edition = Edition.objects.get()
    edition_publish(edition_id=edition.pk, actor=people["lead"])
    version.refresh_from_db()
    assert version.frozen
    version.title_en = "Renamed after publication"
    with pytest.raises(InvalidTransition):
        version.save()
    url = f"{VERSIONS}{version.pk}/change/"
    client.force_login(people["author"])
    data = form_data(client.get(url).text, "taskversion_form")
    data["title_en"] = "Renamed after publication"
    assert client.post(url, data).status_code == 403
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE catalogue_taskversion SET title_en = 'raw' WHERE id = %s", [version.pk]
            )
    assert TaskVersion.objects.get(pk=version.pk).title_en == task.current_version.title_en


def test_a_published_editions_thresholds_are_refused_everywhere(people):
    edition = Edition.objects.get()
    edition_publish(edition_id=edition.pk, actor=people["lead"])
    edition.refresh_from_db()
    with pytest.raises(DatabaseError), transaction.atomic():
        Edition.objects.filter(pk=edition.pk).update(min_eligible_runs=1)
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE methodology_edition SET min_coverage = 1 WHERE id = %s", [edition.pk]
            )
    edition.min_eligible_runs = 1
    with pytest.raises(Exception, match="is published and cannot change"):
        edition.save()
    assert Edition.objects.get(pk=edition.pk).min_eligible_runs is None
    # Its status still moves on when the next edition is published.
    Edition.objects.filter(pk=edition.pk).update(status="superseded")


def test_a_new_version_is_started_from_the_frozen_one_in_the_admin(
    client, people, current, task, django_capture_on_commit_callbacks
):
    """The frozen page's one action: a draft copied under the next free number, opened for
    editing; the draft appears on no public page until it is validated and made current."""
    client.force_login(people["author"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{VERSIONS}{current.pk}/start-next/")
    assert response.status_code == 302
    draft = TaskVersion.objects.get(definition=task, version="1.1.0")
    assert response.url == f"{VERSIONS}{draft.pk}/change/"
    assert not draft.frozen and draft.editors.filter(pk=people["author"].pk).exists()
    assert list(draft.clauses.values_list("kind", "text_en")) == list(
        current.clauses.values_list("kind", "text_en")
    )
    assert draft.applicability.count() == current.applicability.count()
    page = client.get(response.url)
    assert "This version is frozen" not in page.text
    data = form_data(page.text, "taskversion_form")
    data["final_state_en"] = UNREVIEWED
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(response.url, data).status_code == 302
    assert TaskVersion.objects.get(pk=draft.pk).final_state_en == UNREVIEWED
    assert stored_text(current)[0] == current.final_state_en
    # A second start takes the next number again.
    task_version_start_next(version_id=current.pk, actor=people["author"])
    assert TaskVersion.objects.filter(definition=task, version="1.2.0").exists()
    # Only a POST starts one.
    assert client.get(f"{VERSIONS}{current.pk}/start-next/").status_code == 403


def test_a_draft_is_on_no_public_page_answer_sitemap_search_or_export(
    client, people, current, task, settings, tmp_path, django_capture_on_commit_callbacks
):
    """Issue 41, item 2: "Draft, in-review and rejected versions never appear on public
    pages, the API's anonymous answers, the sitemap, search, feeds or exports"."""
    with django_capture_on_commit_callbacks(execute=True):
        draft = task_version_start_next(version_id=current.pk, actor=people["author"])
        marker = "DRAFT-6b1f-never-reviewed"
        TaskVersion.objects.filter(pk=draft.pk).update(title_en=marker, title_ko=marker)
    for prefix in ("", "/ko"):
        page = public_page(client, task, prefix)
        assert marker not in page and "1.1.0" not in page
        assert current.version in page
    assert marker not in client.get(f"/api/v1/tasks/{task.slug}/").text
    assert marker not in client.get("/api/v1/tasks/").text
    assert marker not in client.get("/sitemap.xml").text
    # The page repeats the query; no result may come of the draft's text.
    assert f"/tasks/{task.slug}/" not in client.get(f"/search/?q={marker}").text
    settings.EXPORT_DIR = tmp_path
    call_command("regenerate_exports", "--sync", stdout=io.StringIO())
    exported = sorted((tmp_path / "current").iterdir())
    assert any(path.name == "mica-catalogue.json" for path in exported)
    for path in exported:
        assert marker.encode() not in path.read_bytes(), path.name
