"""What started each job run: the job list groups the runs a person started apart from
those content changes, the schedule, commands and retries start on their own."""

import pytest
from django.core.management import call_command

from mica.exports.tasks import nightly
from mica.jobs.models import JobCause, JobRun
from mica.jobs.services import job_request_debounced, job_run_enqueue
from mica.site.tasks import content_reload, daily_bake, pages_bake_run
from tests.factories import LeadFactory

pytestmark = pytest.mark.django_db

LONG_MESSAGE = "Rendered the pages of every market edition " * 8


def rows(page):
    """The list's table alone, without its filters."""
    return page.split('id="result_list"')[1].split("</table>")[0]


def newest():
    return JobRun.objects.latest("pk")


@pytest.fixture
def queued(django_capture_on_commit_callbacks):
    """Runs are recorded and left queued: their work is not what is tested here."""
    with django_capture_on_commit_callbacks(execute=False):
        yield


def test_each_way_a_run_starts_records_its_cause(client, queued):
    job_request_debounced(pages_bake_run, 10)
    assert newest().cause == JobCause.CHANGE
    daily_bake()
    assert newest().cause == JobCause.SCHEDULE
    nightly()
    assert newest().cause == JobCause.SCHEDULE
    for command in ("bake_pages", "regenerate_exports", "rerun_gate"):
        call_command(command, stdout=open("/dev/null", "w"))
        assert newest().cause == JobCause.COMMAND, command
    job_run_enqueue(task=content_reload, retry_of=newest())
    assert newest().cause == JobCause.RETRY
    lead = LeadFactory(username="method-lead")
    client.force_login(lead)
    client.post("/admin/jobs/jobrun/start/regenerate-exports/")
    assert (newest().cause, newest().requested_by) == (JobCause.PERSON, lead)


def test_the_job_list_shows_the_runs_a_person_started_apart(client, queued):
    lead = LeadFactory(username="method-lead")
    job_run_enqueue(task=content_reload, actor=lead)
    job_request_debounced(pages_bake_run, 10)
    client.force_login(lead)
    people = rows(client.get("/admin/jobs/jobrun/", {"cause__exact": "person"}).text)
    assert "method-lead" in people and "a content change" not in people
    changes = rows(client.get("/admin/jobs/jobrun/", {"cause__exact": "change"}).text)
    assert "a content change" in changes and "method-lead" not in changes
    korean = client.get("/ko/admin/jobs/jobrun/").text
    assert "시작한 주체" in korean and "콘텐츠 변경" in korean


def test_a_long_message_is_cut_in_the_list_and_whole_on_the_run_s_page(client, queued):
    run = job_run_enqueue(task=content_reload)
    JobRun.objects.filter(pk=run.pk).update(message_en=LONG_MESSAGE)
    client.force_login(LeadFactory())
    listed = rows(client.get("/admin/jobs/jobrun/").text)
    assert LONG_MESSAGE.strip() not in listed and LONG_MESSAGE[:40] in listed
    assert LONG_MESSAGE.strip() in client.get(f"/admin/jobs/jobrun/{run.pk}/change/").text
