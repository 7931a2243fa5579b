"""The holdout as a capability: from ingestion to the admin, and nowhere public after an
attempt on a holdout task exists (issue 17, "Holdout ids become public once an attempt on
a holdout task exists").

Seed: "A holdout item is never reachable from a public artifact."
"""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission

from catalogue.models import TaskVersion
from governance.gate import gate_recompute_all
from governance.models import GateCell
from submissions.models import Attempt
from tests.factories import (
    HOLDOUT_CANARY,
    StaffFactory,
    api_auth,
    attempt_payload,
    holdout_keeper,
    holdout_task,
)
from tests.support import crawl

pytestmark = pytest.mark.django_db

HOLDOUT = "ec-secret-holdout-item"


@pytest.fixture
def holdout(operator):
    return holdout_task(HOLDOUT)


def post_attempt(client, user, **changes):
    return client.post(
        "/api/v1/attempts/",
        json.dumps(attempt_payload(**{"verification": "independent-rerun", **changes})),
        content_type="application/json",
        **api_auth(user),
    )


def leaks(bodies):
    return [path for path, body in bodies.items() if HOLDOUT_CANARY in body or HOLDOUT in body]


def test_only_holdout_access_records_on_a_holdout_task_and_others_cannot_tell(client, holdout):
    """Finding: "an attempt on a holdout id answers 201 and is stored, a non-existent id
    answers 400 unknown-task-version"."""
    recorder = StaffFactory(username="recorder")
    recorder.user_permissions.add(
        *Permission.objects.filter(codename__in=["record_independent_rerun"])
    )
    on_holdout = post_attempt(client, recorder, task=HOLDOUT, attempt_id="probe-1")
    on_nothing = post_attempt(client, recorder, task="ec-no-such-task", attempt_id="probe-1")
    assert on_holdout.status_code == on_nothing.status_code == 400
    assert on_holdout.json() == on_nothing.json()
    assert on_holdout.json()["errors"]["rule"] == ["unknown-task-version"]
    # A permission without the person's own declaration is not access either.
    undeclared = holdout_keeper("undeclared", declared=False)
    assert post_attempt(client, undeclared, task=HOLDOUT).json() == on_nothing.json()
    assert not Attempt.objects.exists()
    keeper = holdout_keeper()
    assert post_attempt(client, keeper, task=HOLDOUT).status_code == 201


def test_verification_classes_need_their_permission(client, operator):
    """Finding: "Any staff account without permissions can post independent-rerun attempts
    onto any operator's snapshot with its token"."""
    bare = StaffFactory(username="bare-staff")
    refused = post_attempt(client, bare)
    assert refused.status_code == 403
    assert "permission" in refused.json()["detail"]
    provisional = post_attempt(client, bare, verification="provisional", attempt_id="acme-kr-002")
    assert provisional.status_code == 403
    assert not Attempt.objects.exists()
    bare.user_permissions.add(Permission.objects.get(codename="record_independent_rerun"))
    bare = type(bare).objects.get(pk=bare.pk)  # permissions are cached per user object
    assert post_attempt(client, bare).status_code == 201
    still = post_attempt(client, bare, verification="provisional", attempt_id="acme-kr-002")
    assert still.status_code == 403


@pytest.fixture
def holdout_attempt(client, holdout):
    """The normal staff rerun path: an attempt on the holdout task, beside a public one."""
    keeper = holdout_keeper()
    assert post_attempt(client, keeper, task=HOLDOUT, attempt_id="acme-kr-h01").status_code == 201
    assert post_attempt(client, keeper, attempt_id="acme-kr-p01").status_code == 201
    gate_recompute_all()
    return keeper


def test_a_cell_counts_a_holdout_attempt_and_never_names_it(client, holdout_attempt):
    cell = GateCell.objects.get()
    assert cell.attempts == 2 and cell.eligible_runs == 2
    assert HOLDOUT not in cell.task_scores and "ec-reschedule-three-party" in cell.task_scores


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_no_public_page_or_api_names_the_holdout_after_an_attempt_on_it(
    client, holdout_attempt, prefix
):
    """Finding: "anonymous GET /api/v1/cells/ lists the holdout task id in the per-task
    scores, and /evidence/<cell>/ links to /tasks/<holdout id>/"."""
    cell = GateCell.objects.get()
    evidence = client.get(f"{prefix}/evidence/{cell.cell_id}/")
    assert evidence.status_code == 200
    assert "acme-kr-p01" in evidence.text and "acme-kr-h01" not in evidence.text
    bodies = crawl(
        client,
        [
            f"{prefix}/",
            f"{prefix}/evidence/",
            f"{prefix}/evidence/{cell.cell_id}/",
            f"{prefix}/systems/",
            f"{prefix}/results/",
            f"{prefix}/search/?q=holdout",
            f"{prefix}/search/?q={HOLDOUT_CANARY}",
            "/sitemap.xml",
            "/api/v1/",
            "/api/v1/cells/",
            "/api/v1/tasks/?limit=200",
        ],
        limit=250,
    )
    assert cell.cell_id in bodies["/api/v1/cells/"] and len(bodies) > 40
    assert not leaks(bodies)


@pytest.mark.vendor
def test_exports_keep_publishing_and_leave_the_holdout_out(
    client, holdout_attempt, settings, tmp_path
):
    """Finding: "After that, exports freeze for good: the holdout scan correctly refuses
    mica-gate.json, so every later regeneration fails"."""
    from mica.exports.publish import exports_build_and_publish

    settings.EXPORT_DIR = tmp_path / "exports"
    exports_build_and_publish()
    exports_build_and_publish()  # and again: nothing freezes
    current = (Path(settings.EXPORT_DIR) / "current").resolve()
    files = {path.name: path.read_text(encoding="utf-8") for path in current.iterdir()}
    assert "mica-gate.json" in files and "acme" in files["mica-gate.json"].lower()
    assert not leaks(files)
    downloads = crawl(client, ["/downloads/", "/ko/downloads/"], limit=40)
    assert not leaks(downloads)


@pytest.mark.vendor
def test_the_baked_pages_leave_the_holdout_out(holdout_attempt, settings, tmp_path, page_cache):
    """The bake publishes every public page as a file (issue 20): the holdout crawl covers
    the baked directory too, every file of it."""
    from mica.content.changes import revisions_bump_all
    from mica.site.bake import bake_current, pages_bake

    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    revisions_bump_all()  # as the attempts' commit does; the test's transaction stays open
    manifest = pages_bake()
    files = {
        str(path.relative_to(bake_current())): path.read_text(encoding="utf-8")
        for path in bake_current().rglob("*")
        if path.is_file()
    }
    assert len(files) == len(manifest["pages"]) + 1 > 200  # each page, and the manifest
    assert (
        "/evidence/" in manifest["pages"]
        and "/tasks/ec-reschedule-three-party/" in files["pages.json"]
    )
    assert not leaks(files)


def test_the_admin_shows_the_holdout_only_to_holdout_access(client, holdout_attempt, holdout):
    """Finding: "any staff account, even with no permissions, sees holdout ids on the
    translation-status page; staff with catalogue view permission read full holdout texts
    in both languages although their declaration says no holdout access"."""
    viewer = StaffFactory(username="catalogue-viewer")
    viewer.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label__in=["catalogue", "submissions"], codename__startswith="view_"
        ).exclude(codename="view_holdout")
    )
    version = TaskVersion.objects.get(definition=holdout)
    pages = [
        "/admin/catalogue/taskversion/translation-status/",
        "/admin/catalogue/taskdefinition/",
        "/admin/catalogue/taskdefinition/?q=secret",
        "/admin/catalogue/taskversion/",
        "/admin/submissions/attempt/",
        "/admin/catalogue/localreview/add/",
    ]
    hidden = [
        f"/admin/catalogue/taskdefinition/{holdout.pk}/change/",
        f"/admin/catalogue/taskversion/{version.pk}/change/",
        f"/admin/catalogue/taskversion/{version.pk}/history/",
        f"/admin/catalogue/taskdefinition/{holdout.pk}/history/",
    ]
    client.force_login(viewer)
    for path in pages:
        response = client.get(path)
        assert response.status_code in (200, 403), path
        assert HOLDOUT not in response.text and HOLDOUT_CANARY not in response.text, path
    assert "ec-reschedule-three-party" in client.get("/admin/catalogue/taskdefinition/").text
    for path in hidden:
        response = client.get(path, follow=True)
        assert HOLDOUT_CANARY not in response.text, path
    client.force_login(holdout_attempt)
    holdout_attempt.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="catalogue", codename__startswith="view_"
        )
    )
    keeper = type(holdout_attempt).objects.get(pk=holdout_attempt.pk)
    client.force_login(keeper)
    assert HOLDOUT in client.get("/admin/catalogue/taskdefinition/").text
    assert HOLDOUT_CANARY in client.get(f"/admin/catalogue/taskversion/{version.pk}/change/").text
