"""Loading the canonical content never destroys an edit: the database is the source of truth.

Issue 14: "An edit made through the admin to a claim, a task version's title and a market
situation survives `make run` run again, and survives the admin's reload button."
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from catalogue.models import TaskDefinition, TaskVersion
from markets.models import IntegrationSituation
from mica.content.loading import content_load, fields_digest
from mica.content.models import LoadedRecord
from mica.methodology.models import ChapterItem
from tests.census import form_data
from tests.factories import LeadFactory

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(canonical_content, client):
    user = LeadFactory(username="editor")
    client.force_login(user)
    return client


def admin_edit(client, record, **changes):
    """Change a record through its admin change form, as an editor's browser posts it."""
    meta = record._meta
    url = f"/admin/{meta.app_label}/{meta.model_name}/{record.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200, url
    data = form_data(page.content.decode(), f"{meta.model_name}_form")
    data.update(changes)
    answer = client.post(url, data)
    assert answer.status_code == 302, answer.content.decode()[-3000:]


def three_edits(client):
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    version = TaskVersion.objects.order_by("pk").first()
    situation = IntegrationSituation.objects.order_by("pk").first()
    admin_edit(client, claim, detail_en=claim.detail_en + " An editor's sentence.")
    admin_edit(client, version, title_en="An editor's title")
    admin_edit(client, situation, title_ko="편집자가 고친 제목")
    return claim, version, situation


def still_edited(claim, version, situation):
    claim.refresh_from_db()
    version.refresh_from_db()
    situation.refresh_from_db()
    return (
        claim.detail_en.endswith(" An editor's sentence.")
        and version.title_en == "An editor's title"
        and situation.title_ko == "편집자가 고친 제목"
    )


def test_admin_edits_survive_a_reload_and_are_reported(editor, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        claim, version, situation = three_edits(editor)
    reports = content_load()
    assert still_edited(claim, version, situation)
    kept = [line for line in reports if ": kept " in line]
    assert len(kept) == 3, reports
    assert any(f"preview-0.1/{claim.section_id}: edited since it was loaded" in k for k in kept)


def test_admin_edits_survive_the_admin_reload_button(
    editor, django_capture_on_commit_callbacks, eager_celery
):
    from mica.jobs.models import JobRun, JobState

    with django_capture_on_commit_callbacks(execute=True):
        claim, version, situation = three_edits(editor)
        answer = editor.post("/admin/jobs/jobrun/start/reload-content/")
    assert answer.status_code == 302
    run = JobRun.objects.latest("pk")
    assert run.state == JobState.SUCCEEDED, run.error
    assert "kept" in run.message
    assert still_edited(claim, version, situation)


def test_a_validated_task_stays_validated(canonical_content):
    task = TaskDefinition.objects.order_by("pk").first()
    TaskDefinition.objects.filter(pk=task.pk).update(lifecycle="validated")
    content_load(sections=["catalogue"])
    task.refresh_from_db()
    assert task.lifecycle == "validated"


def test_a_record_nobody_edited_follows_its_file(canonical_content):
    """A new release's text reaches a record still holding what the previous file said."""
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    shipped = claim.detail_en
    names = ["position", "chapter", "item_type", "kind", "state", "reference_keys", "link"]
    # As if an earlier file had said something else, and it was loaded untouched.
    claim.detail_en = "What the previous release said."
    claim.save()
    record = LoadedRecord.objects.get(
        name=f"methodology.chapteritem:preview-0.1/{claim.section_id}"
    )
    fields = {
        name: getattr(claim, name)
        for name in [*names, "korean_approved_digest"]
        + [f"{f}_{lang}" for f in ("term", "detail", "link_label") for lang in ("en", "ko")]
    }
    record.digest = fields_digest(ChapterItem, fields)
    record.save()
    content_load(sections=["methodology"])
    claim.refresh_from_db()
    assert claim.detail_en == shipped


def test_replace_overwrites_a_named_edit_and_keeps_it_in_history(canonical_content):
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    shipped = claim.detail_en
    claim.detail_en = "An editor's version."
    claim.save()
    name = f"methodology.chapteritem:preview-0.1/{claim.section_id}"
    content_load(sections=["methodology"], replace=[name])
    claim.refresh_from_db()
    assert claim.detail_en == shipped
    texts = list(claim.history.order_by("history_id").values_list("detail_en", flat=True))
    assert texts[-2:] == ["An editor's version.", shipped]


def test_bad_load_requests_change_nothing(canonical_content):
    claim = ChapterItem.objects.filter(item_type="claim").order_by("pk").first()
    claim.detail_en = "An editor's version."
    claim.save()
    with pytest.raises(CommandError, match="No canonical record to replace is named: nope"):
        call_command(
            "load_canonical_content",
            replace=[f"methodology.chapteritem:preview-0.1/{claim.section_id}", "nope"],
            stdout=open(os.devnull, "w"),
        )
    with pytest.raises(CommandError, match="Unknown content section: recipes"):
        call_command("load_canonical_content", "recipes", stdout=open(os.devnull, "w"))
    claim.refresh_from_db()
    assert claim.detail_en == "An editor's version."


def test_a_second_load_writes_nothing(canonical_content):
    """Loading twice is idempotent: every record reads back as it was written."""
    reports = content_load()
    counts = [line for line in reports if "created" in line]
    assert counts and all(" created 0, updated 0," in line for line in counts), reports
    assert all(" kept 0" in line for line in counts), reports


def _manage(env, *args):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout


EDIT_IN_THE_ADMIN = """
from django.contrib.auth.models import User
from django.test import Client
from catalogue.models import TaskVersion
from markets.models import IntegrationSituation
from mica.methodology.models import ChapterItem
from tests.mica.site.test_canonical_load import three_edits
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice
editor = User.objects.create_superuser("editor", "editor@example.org", "pw")
client = Client()
client.force_login(editor)
# A superuser's admin opens after the second factor: a signed-in session has confirmed one.
session = client.session
session[DEVICE_ID_SESSION_KEY] = TOTPDevice.objects.create(user=editor, name="app").persistent_id
session.save()
claim, version, situation = three_edits(client)
print(claim.pk, version.pk, situation.pk)
"""

CHECK_EDITS = """
from catalogue.models import TaskVersion
from markets.models import IntegrationSituation
from mica.methodology.models import ChapterItem
from tests.mica.site.test_canonical_load import still_edited
claim, version, situation = {pks}
print(still_edited(ChapterItem.objects.get(pk=claim), TaskVersion.objects.get(pk=version),
      IntegrationSituation.objects.get(pk=situation)))
"""


@pytest.mark.embedded_only
def test_admin_edits_survive_make_run_again(tmp_path):
    """The steps `make run` takes before serving (`serve_setup` runs these commands, then
    the bake), run twice around an admin edit on a file database, in processes of their
    own as on a real restart."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MICA_")},
        "MICA_VAR_DIR": str(tmp_path),
    }
    setup = ["migrate --no-input", "load_canonical_content", "regenerate_exports --sync"]
    for step in setup:
        _manage(env, *step.split())
    pks = _manage(env, "shell", "-c", EDIT_IN_THE_ADMIN).split()[-3:]
    outputs = {step: _manage(env, *step.split()) for step in setup}
    assert outputs["load_canonical_content"].count(": kept ") == 3
    check = CHECK_EDITS.format(pks="(" + ", ".join(pks) + ")")
    assert _manage(env, "shell", "-c", check).split()[-1] == "True"
