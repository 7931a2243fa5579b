"""Every (state, action) pair of the JobRun workflow."""

import pytest

from mica.errors import InvalidTransition
from mica.jobs.models import JobRun, JobState
from mica.jobs.workflows import JOB_TRANSITIONS, job_run_transition

pytestmark = pytest.mark.django_db

ACTIONS = sorted({action for _state, action in JOB_TRANSITIONS})


@pytest.mark.parametrize("state", list(JobState))
@pytest.mark.parametrize("action", ACTIONS)
def test_every_pair(state, action):
    job_run = JobRun.objects.create(job_name="probe", state=state)
    expected = JOB_TRANSITIONS.get((state, action))
    if expected is None:
        with pytest.raises(InvalidTransition):
            job_run_transition(job_run_id=job_run.pk, action=action)
        job_run.refresh_from_db()
        assert job_run.state == state, "a refused move leaves the run as it was"
    else:
        moved = job_run_transition(job_run_id=job_run.pk, action=action, progress=40)
        assert moved.state == expected
        assert JobRun.objects.get(pk=job_run.pk).state == expected


def test_progress_is_clamped_and_finishing_records_time():
    job_run = JobRun.objects.create(job_name="probe")
    job_run_transition(job_run_id=job_run.pk, action="start")
    running = job_run_transition(
        job_run_id=job_run.pk, action="report", progress=250, message="halfway"
    )
    assert running.progress == 100 and running.message == "halfway"
    done = job_run_transition(job_run_id=job_run.pk, action="succeed")
    assert done.finished_at >= done.started_at


def test_refusal_is_in_the_users_language():
    from django.utils import translation

    job_run = JobRun.objects.create(job_name="probe", state=JobState.SUCCEEDED)
    with translation.override("ko"), pytest.raises(InvalidTransition) as refused:
        job_run_transition(job_run_id=job_run.pk, action="start")
    assert "성공 상태인 작업 실행" in str(refused.value.message)
