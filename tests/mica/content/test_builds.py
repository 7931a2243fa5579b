"""Published builds in a real object store (SeaweedFS through its S3 gateway), published by a
pointer in the database, and read the same from every node."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import transaction

from mica.content.builds import build_follow, build_published, object_name
from mica.content.models import PublishedBuild, PublishedPointer
from mica.exports.publish import exports_build_and_publish
from mica.exports.selectors import EXPORT_KIND
from mica.methodology.models import GlossaryTerm
from mica.site.bake import BUILD_KIND, MANIFEST, pages_bake
from mica.site.bake_layers import BakeView
from tests.mica.exports.conftest import assert_intact, published
from tests.support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[3]


def _term_edit(suffix):
    """A committed content edit: it moves the content's revision."""
    with transaction.atomic():
        term = GlossaryTerm.objects.order_by("pk").first()
        term.definition_en += suffix
        term.save()
    return term


def _keys(store, bucket, prefix):
    listing = store.client().list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")
    return {item["Key"].removeprefix(f"{prefix}/") for item in listing.get("Contents", [])}


@pytest.mark.vendor
def test_an_export_set_is_stored_by_digest_and_published_by_the_pointer(
    s3_builds, canonical_content, settings, tmp_path
):
    store, bucket, prefix = s3_builds
    settings.EXPORT_DIR = tmp_path / "node-a"
    manifest = exports_build_and_publish()

    build = build_published(EXPORT_KIND)
    assert build.summary == manifest
    keys = _keys(store, bucket, prefix)
    for name, sha256 in build.files.items():
        assert object_name(sha256) in keys, name
        body = store.client().get_object(Bucket=bucket, Key=f"{prefix}/{object_name(sha256)}")
        assert hashlib.sha256(body["Body"].read()).hexdigest() == sha256
    assert f"builds/{EXPORT_KIND}/{build.name}.json" in keys


@pytest.mark.vendor
def test_another_node_serves_the_published_set_from_the_store_then_from_its_copy(
    s3_builds, canonical_content, settings, tmp_path, client
):
    """ "Without a shared export directory the web nodes 404 every export file" (issue 31):
    a node that did not make the set answers it from the store, with the same ETag, and
    then from a copy of its own."""
    settings.EXPORT_DIR = tmp_path / "worker"
    exports_build_and_publish()
    made = published(settings.EXPORT_DIR)

    settings.EXPORT_DIR = tmp_path / "web-node"  # nothing on this node's disk
    for name in ("mica-catalogue.json", "manifest.json"):
        response = client.get(f"/downloads/{name}")
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == made[name]
        assert response["ETag"] == f'"{hashlib.sha256(made[name]).hexdigest()}"'
        again = client.get(f"/downloads/{name}", HTTP_IF_NONE_MATCH=response["ETag"])
        assert again.status_code == 304
    assert "mica-catalogue.json" in client.get("/downloads/").content.decode()

    def copied():
        """the node's own copy of the published set, fetched off the requests"""
        return published(settings.EXPORT_DIR) == made

    wait_for(copied, timeout=30)
    assert_intact(made)
    # Followed once: the next look finds the copy current.
    assert not build_follow(EXPORT_KIND, settings.EXPORT_DIR, "manifest.json")


@pytest.mark.vendor
def test_a_build_of_older_content_never_replaces_a_newer_one(
    s3_builds, canonical_content, settings, tmp_path
):
    """ "two regenerations finished out of order and an older export set replaced a newer
    one" (issue 31): the one that began before an edit finishes last and is not published."""
    settings.EXPORT_DIR = tmp_path / "exports"
    newer = {}

    def progress(percent, message=""):
        # While the first run writes its files, an edit commits and a second run publishes.
        if not newer and percent >= 5:
            newer["term"] = _term_edit(" Edited while the first set was written.")
            newer["manifest"] = exports_build_and_publish()

    exports_build_and_publish(progress=progress)

    pack = (tmp_path / "exports" / "current" / "mica-methodology.en.md").read_text()
    assert "Edited while the first set was written." in pack
    pointer = PublishedPointer.objects.get(kind=EXPORT_KIND)
    assert pointer.build.summary == newer["manifest"]
    assert PublishedBuild.objects.filter(kind=EXPORT_KIND).count() == 2


@pytest.mark.vendor
def test_the_baked_pages_reach_another_node_whole(
    s3_builds, canonical_content, settings, tmp_path, django_capture_on_commit_callbacks
):
    # The worker's folder is the setting; the web node's is named to the follower alone:
    # a setting changed between two bakes would make the second a full one.
    worker, web_node = tmp_path / "worker-pages", tmp_path / "web-node-pages"
    settings.PAGE_BAKE_DIR = worker
    paths = ["/", "/methodology/", "/ko/methodology/", "/tasks/"]
    manifest = pages_bake(paths=paths)

    assert build_follow(BUILD_KIND, web_node, MANIFEST)
    copy = web_node / "current"
    assert json.loads((copy / MANIFEST).read_text()) == json.loads(json.dumps(manifest))
    for page in manifest["pages"].values():
        assert (copy / page["file"]).read_bytes() == (
            worker / "current" / page["file"]
        ).read_bytes()

    with django_capture_on_commit_callbacks(execute=True):  # committed, as an editor's is
        _term_edit(" A second bake.")
    pages_bake(paths=paths)
    second = build_published(BUILD_KIND)
    first = PublishedBuild.objects.exclude(pk=second.pk).get(kind=BUILD_KIND)
    # A layer on the first: it stores the pages that show the term, and its manifest.
    assert second.summary["below"] == [first.name]
    assert 1 < len(second.files) < len(first.files), "some pages do not show the edited term"
    assert build_follow(BUILD_KIND, web_node, MANIFEST)
    copy = web_node / "current"
    for relative, sha256 in second.files.items():
        assert hashlib.sha256((copy / relative).read_bytes()).hexdigest() == sha256
    served = BakeView(web_node, copy).files()
    made = BakeView(worker, worker / "current").files()
    assert served.keys() == made.keys() == set(paths)
    assert all(served[path].read_bytes() == made[path].read_bytes() for path in paths)
    builds = sorted((web_node / "builds").iterdir())
    assert len(builds) == 2, "the node keeps the copy it serves and the layer below, no more"


@pytest.mark.parametrize(
    "command",
    [
        ["manage.py", "check"],
        ["-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", "--bind", "127.0.0.1:0", "mica.wsgi"],
    ],
    ids=["check", "gunicorn"],
)
def test_several_nodes_refuse_to_start_on_builds_of_their_own_disk(command, tmp_path):
    """A second node on a store under var/ would serve builds the first never sees."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(MICA_VAR_DIR=str(tmp_path), MICA_WEB_NODES="2")
    started = subprocess.run(
        [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert started.returncode != 0
    assert "mica.E101" in started.stdout + started.stderr
    env["MICA_S3_BUCKET"] = "mica-builds"
    checked = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
