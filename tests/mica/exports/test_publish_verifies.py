"""The publish job checks a new export set with mica_verify before the pointer moves.

"The publish job runs the verifier's checks on a new export set before the pointer moves:
a set that does not verify is not published, and the job says which figure differs."
Before, a figure the portal computed wrongly was published, and only a reader running the
verifier afterwards could find it. The portal's own gate document writer is made to
publish one wrong figure here, as a bug in it would.
"""

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from mica.content.models import PublicationKind, PublicationLogEntry
from mica.exports import documents
from mica.exports.publish import exports_build_and_publish
from mica.exports.selectors import export_published
from mica.exports.validation import ExportRefused
from mica.jobs.models import JobRun, JobState
from tests.factories import seeded_attempts
from tests.mica.exports.conftest import assert_intact, published

# Publishing appends to the publication log, which locks its table on PostgreSQL.
pytestmark = [pytest.mark.django_db, pytest.mark.vendor]

JOB = "mica.exports.tasks.exports_regenerate"
CHECKS = re.compile(r"mica_verify passed all (\d+) checks of the figures")


@pytest.fixture(autouse=True)
def signing_key_file(settings, tmp_path):
    """This test's own embedded key, made on first use."""
    settings.SIGNING_KEY = ""
    settings.SIGNING_KEY_FILE = tmp_path / "var" / "signing_key"


@pytest.fixture
def seeded(client, staff, operator):
    """A cell of independent reruns that passes the gate, and a cell of the operator's
    self-reported runs in another market, which the gate blocks."""
    seeded_attempts(client, staff, operator)


def regenerate(*options):
    out = io.StringIO()
    call_command("regenerate_exports", *options, stdout=out)
    return out.getvalue()


@pytest.fixture
def writer_goes_wrong(monkeypatch):
    """From when it is called, the gate document writer publishes the KR cell's `fields`
    (its p95 latency unless told) one unit too high, as a bug in it would. Returns the
    names of the figures it changed, as the verifier names them."""
    written = documents.gate_document

    def go_wrong(*fields):
        names = []

        def gate_document(edition):
            document = written(edition)
            cell = next(cell for cell in document["cells"] if cell["market"] == "KR")
            for field in fields or ("p95_seconds",):
                cell[field] += 1.0
                names.append(f"{cell['cell']} {field}")
            return document

        monkeypatch.setattr(documents, "gate_document", gate_document)
        return names

    return go_wrong


def exports_entries():
    return list(PublicationLogEntry.objects.filter(kind=PublicationKind.EXPORTS))


def test_a_publication_passes_the_verifier_and_says_how_many_checks_it_ran(seeded, export_dir):
    printed = regenerate("--sync")
    checks = int(re.search(rf"\[ 90%\] {CHECKS.pattern}", printed).group(1))
    # Two cells, each with every figure, its tasks and its blockers compared, and the
    # market and family figures above them.
    assert checks >= 2 * 20
    manifest = assert_intact(published(export_dir))
    gate = json.loads(published(export_dir)["mica-gate.json"])
    assert {cell["market"] for cell in gate["cells"]} == {"KR", "JP"}
    assert export_published().summary == manifest
    assert len(exports_entries()) == 1


def test_the_verifier_step_reports_its_checks_and_the_job_publishes_after_it(
    seeded, export_dir, django_capture_on_commit_callbacks, eager_celery
):
    steps = []
    exports_build_and_publish(progress=lambda percent, message="": steps.append(str(message)))
    assert "Recomputing the figures with mica_verify" in steps
    assert any(CHECKS.fullmatch(step) for step in steps)
    with django_capture_on_commit_callbacks(execute=True):
        regenerate("--full")
    run = JobRun.objects.get(job_name=JOB)
    assert run.state == JobState.SUCCEEDED, run.error
    assert json.loads(published(export_dir)["manifest.json"])["job_run"] == run.pk
    assert len(exports_entries()) == 2


def test_a_set_with_a_figure_that_does_not_verify_is_not_published(
    seeded, export_dir, writer_goes_wrong
):
    regenerate("--sync")  # the first set, before the writer goes wrong
    changed = writer_goes_wrong()
    before, pointer, entries = published(export_dir), export_published(), exports_entries()
    builds = sorted(path.name for path in (Path(export_dir) / "builds").iterdir())
    with pytest.raises(ExportRefused) as refused:
        exports_build_and_publish(full=True)
    [figure] = set(changed)
    message = str(refused.value.message)
    assert figure in message and "nothing was published" in message
    # The set published before stays, whole: the files, the pointer, the log.
    assert published(export_dir) == before
    assert export_published().pk == pointer.pk and export_published().summary == pointer.summary
    assert exports_entries() == entries
    assert sorted(path.name for path in (Path(export_dir) / "builds").iterdir()) == builds


def test_the_failed_job_names_the_figure_in_both_languages(
    seeded, export_dir, django_capture_on_commit_callbacks, eager_celery, writer_goes_wrong
):
    changed = writer_goes_wrong()
    with django_capture_on_commit_callbacks(execute=True):
        regenerate("--full")
    run = JobRun.objects.get(job_name=JOB)
    assert run.state == JobState.FAILED
    [figure] = set(changed)
    assert figure in run.message_en and "does not verify" in run.message_en
    assert figure in run.message_ko and "검증을 통과하지 못했습니다" in run.message_ko
    assert "ExportRefused" in run.error
    # Nothing was ever published: there is no set, no pointer and no log entry.
    assert published(export_dir) == {} and export_published() is None
    assert exports_entries() == []


def test_a_refusal_names_three_differing_figures_and_counts_the_others(
    seeded, export_dir, writer_goes_wrong
):
    changed = writer_goes_wrong("p95_seconds", "p50_seconds", "accuracy", "eligible_runs")
    with pytest.raises(ExportRefused) as refused:
        exports_build_and_publish()
    message = str(refused.value.message)
    # In the verifier's order, which is not the order they were changed in.
    assert len([name for name in set(changed) if name in message]) == 3
    assert " and 1 more differently from what the set says" in message
    assert published(export_dir) == {} and exports_entries() == []
