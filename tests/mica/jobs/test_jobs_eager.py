"""JobRun through the embedded profile: tasks run in-process after commit."""

import pytest
from django.test import override_settings

from mica.jobs.models import JobRun, JobState
from mica.jobs.services import job_run_enqueue
from mica.methodology.models import Edition
from mica.site.tasks import content_reload
from tests.factories import LeadFactory, StaffFactory

pytestmark = pytest.mark.django_db

EAGER = override_settings(CELERY_TASK_ALWAYS_EAGER=True)


@pytest.fixture(autouse=True)
def _eager(eager_celery):
    """Every job here runs in this process, whatever the profile."""


def test_job_is_queued_until_commit_then_succeeds(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job_run = job_run_enqueue(task=content_reload)
    queued = JobRun.objects.get(pk=job_run.pk)
    assert queued.state == JobState.QUEUED and queued.started_at is None
    for callback in callbacks:
        callback()
    job_run.refresh_from_db()
    assert job_run.state == JobState.SUCCEEDED
    assert job_run.progress == 100
    assert job_run.attempts == 1
    assert job_run.started_at <= job_run.finished_at
    assert "methodology" in job_run.message
    assert Edition.objects.filter(slug="preview-0.1").exists()


def test_failing_job_records_its_error(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job_run = job_run_enqueue(task=content_reload, arguments={"sections": ["nowhere"]})
    job_run.refresh_from_db()
    assert job_run.state == JobState.FAILED
    assert "Unknown content section: nowhere" in job_run.message
    assert "ValidationFailed" in job_run.error
    assert job_run.finished_at is not None


def test_a_finished_run_is_not_run_twice(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job_run = job_run_enqueue(task=content_reload)
    content_reload.delay(job_run.pk)
    job_run.refresh_from_db()
    assert job_run.attempts == 1


def test_admin_lists_runs_with_progress_bars(client, django_capture_on_commit_callbacks):
    admin = LeadFactory()
    client.force_login(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/jobs/jobrun/start/reload-content/")
    assert response.status_code == 302
    page = client.get("/admin/jobs/jobrun/")
    assert page.status_code == 200
    assert '<progress max="100" value="100"' in page.text
    assert "mica.site.tasks.content_reload" in page.text
    korean = client.get("/ko/admin/jobs/jobrun/")
    assert "작업 실행" in korean.text and "진행률" in korean.text


def test_only_superusers_reload_content(client):
    staff = StaffFactory(username="author")
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="view_jobrun"))
    client.force_login(staff)
    client.post("/admin/jobs/jobrun/start/reload-content/")
    assert not JobRun.objects.exists()


@pytest.mark.vendor
def test_superusers_start_the_export_and_gate_jobs_from_the_job_list(
    client, canonical_content, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.EXPORT_DIR = tmp_path
    admin = LeadFactory()
    client.force_login(admin)
    korean = client.get("/ko/admin/jobs/jobrun/").text
    assert "내보내기 다시 만들기" in korean and "공개 관문 다시 실행" in korean
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/jobs/jobrun/start/regenerate-exports/")
        client.post("/admin/jobs/jobrun/start/rerun-gate/")
    runs = dict(JobRun.objects.values_list("job_name", "state"))
    assert runs == {
        "mica.exports.tasks.exports_regenerate": "succeeded",
        "governance.tasks.gate_recompute": "succeeded",
    }
    assert (tmp_path / "current" / "manifest.json").exists()
    assert client.post("/admin/jobs/jobrun/start/no-such-job/").status_code == 302
    assert JobRun.objects.count() == 2
