"""The signed, append-only publication log (issue 41, item 4).

"Every publication (an export set, a bake, an edition) appends one entry [...] signed with
the site's Ed25519 key [...] Entries are append-only in the database (triggers). Key
rotation is an entry signed by the old key." Acceptance: "A publication appends exactly
one log entry; the chain and signatures check with the published key after publications,
a restart and a restore from backup."
"""

import base64
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from mica import signing
from mica.content.models import PublicationKind, PublicationLogEntry
from mica.content.publication_log import (
    TABLE,
    PublicationLogRefused,
    entry_document,
    publication_log_append,
    sha256_of,
)
from mica.errors import AppendOnly
from mica.publication_chain import (
    ChainBroken,
    canonical,
    entry_content,
    entry_digest,
    public_key_id,
    public_key_load,
    verify_chain,
)
from tests.factories import LeadFactory

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def key_file(settings, tmp_path):
    """This test's own embedded key, made on first use."""
    settings.SIGNING_KEY = ""
    settings.SIGNING_KEY_FILE = tmp_path / "var" / "signing_key"
    return settings.SIGNING_KEY_FILE


@pytest.fixture(autouse=True)
def _the_log_begins_empty(db):
    assert not PublicationLogEntry.objects.exists()


@pytest.fixture
def export_dir(settings, tmp_path):
    settings.EXPORT_DIR = tmp_path / "exports"
    return settings.EXPORT_DIR


def log_json(client, prefix=""):
    response = client.get(f"{prefix}/transparency/log.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    return json.loads(b"".join(response.streaming_content))


def published_key(client):
    response = client.get("/transparency/key")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    return response.content.decode()


def entries_logged():
    return list(PublicationLogEntry.objects.order_by("sequence"))


def regenerate(callbacks):
    out = io.StringIO()
    with callbacks(execute=True):
        call_command("regenerate_exports", "--sync", stdout=out, stderr=io.StringIO())
    return out.getvalue()


def append(number=1, **subject):
    for index in range(number):
        publication_log_append(
            kind=PublicationKind.EXPORTS, subject={"build": f"test-{index}", **subject}
        )
    return entries_logged()


@pytest.fixture
def three(canonical_content):
    """An entry of each kind of publication, as each publication writes it."""
    publication_log_append(
        kind=PublicationKind.EXPORTS,
        subject={
            "build": "b1",
            "build_id": 1,
            "edition": "preview-0.1",
            "manifest_sha256": "a" * 64,
        },
    )
    publication_log_append(
        kind=PublicationKind.EDITION,
        subject={
            "slug": "preview-0.1",
            "label": {"en": "Preview 0.1", "ko": "프리뷰 0.1"},
            "published_on": "2026-12-01",
            "catalogue_sha256": "b" * 64,
        },
    )
    publication_log_append(
        kind=PublicationKind.BAKE,
        subject={"build": "p1", "build_id": 2, "pages": 120, "manifest_sha256": "c" * 64},
    )
    return entries_logged()


# --- Each publication appends exactly one entry ---------------------------------------------


def test_an_export_publication_appends_exactly_one_entry(
    canonical_content, export_dir, django_capture_on_commit_callbacks
):
    from mica.exports.selectors import export_published

    assert "Published to" in regenerate(django_capture_on_commit_callbacks)
    [entry] = entries_logged()
    build = export_published()
    manifest = (export_dir / "current" / "manifest.json").read_bytes()
    assert entry.kind == "exports" and entry.sequence == 1
    assert entry.subject == {
        "build": build.name,
        "build_id": build.pk,
        "edition": json.loads(manifest)["edition"]["slug"],
        "manifest_sha256": sha256(manifest),
    }
    # Nothing changed: nothing is published, and nothing is logged.
    assert "Nothing changed" in regenerate(django_capture_on_commit_callbacks)
    assert len(entries_logged()) == 1


def sha256(data):
    import hashlib

    return hashlib.sha256(data).hexdigest()


EDITION_NAMES = ("slug", "label", "published_on", "catalogue_sha256")


def test_an_edition_publication_appends_exactly_one_entry(canonical_content):
    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish

    edition = edition_publish(
        edition_id=Edition.objects.get(slug="preview-0.1").pk, actor=LeadFactory()
    )
    [entry] = entries_logged()
    assert entry.kind == "edition"
    # What every edition's entry names (the holdout's commitments may join it).
    assert {key: entry.subject[key] for key in EDITION_NAMES} == {
        "slug": "preview-0.1",
        "label": {"en": edition.version_label_en, "ko": edition.version_label_ko},
        "published_on": edition.published_on.isoformat(),
        "catalogue_sha256": sha256_of(edition.catalogue_snapshot),
    }


def test_a_refused_edition_publication_appends_nothing(canonical_content):
    from mica.errors import PermissionRefused
    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish
    from tests.factories import StaffFactory

    with pytest.raises(PermissionRefused):
        edition_publish(edition_id=Edition.objects.get(slug="preview-0.1").pk, actor=StaffFactory())
    assert entries_logged() == []


def test_a_bake_appends_exactly_one_entry(canonical_content, settings, tmp_path, page_cache):
    from mica.content.builds import build_published
    from mica.site.bake import BUILD_KIND, pages_bake

    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    manifest = pages_bake(paths=["/", "/ko/", "/methodology/"])
    [entry] = entries_logged()
    build = build_published(BUILD_KIND)
    assert entry.kind == "bake"
    assert entry.subject == {
        "build": build.name,
        "build_id": build.pk,
        "pages": len(manifest["pages"]),
        "manifest_sha256": build.files["pages.json"],
    }


def test_a_publication_whose_log_entry_fails_is_not_published(
    canonical_content, export_dir, settings, django_capture_on_commit_callbacks
):
    """The entry and the pointer's move are one transaction: no key, no publication."""
    from django.core.management import CommandError

    from mica.exports.selectors import export_published

    settings.SIGNING_KEY_FILE = None  # production without MICA_SIGNING_KEY
    with pytest.raises(CommandError, match="Nothing was published: Set MICA_SIGNING_KEY"):
        regenerate(django_capture_on_commit_callbacks)
    assert export_published() is None and entries_logged() == []


# --- The chain checks with the published key ------------------------------------------------


def test_the_chain_and_signatures_check_with_the_published_key(
    client, canonical_content, export_dir, settings, tmp_path, page_cache,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish
    from mica.site.bake import pages_bake

    settings.PAGE_BAKE_DIR = tmp_path / "pages"
    edition_publish(edition_id=Edition.objects.get(slug="preview-0.1").pk, actor=LeadFactory())
    regenerate(django_capture_on_commit_callbacks)
    pages_bake(paths=["/", "/ko/"])
    log = log_json(client)
    assert [e["kind"] for e in log["entries"]] == ["edition", "exports", "bake"]
    assert [e["sequence"] for e in log["entries"]] == [1, 2, 3]
    for entry in log["entries"]:
        assert len(base64.b64decode(entry["signature"], validate=True)) == 64
    key = published_key(client)
    assert verify_chain(log["entries"], [key]) == log["key_id"] == public_key_id(key)
    assert log["keys"] == {log["key_id"]: key}
    # The same log and key on every language's address, all of it read from the database.
    assert log_json(client, "/ko") == log


def test_the_manifest_signature_checks_against_the_manifest(
    client, canonical_content, export_dir, django_capture_on_commit_callbacks
):
    from mica.exports.selectors import export_published

    regenerate(django_capture_on_commit_callbacks)
    manifest = b"".join(client.get("/downloads/manifest.json").streaming_content)
    response = client.get("/downloads/manifest.json.sig")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    signature = b"".join(response.streaming_content).decode().strip()
    public_key_load(published_key(client)).verify(base64.b64decode(signature), manifest)
    # A file of the set's build, beside the manifest, but not in the manifest's own list.
    assert "manifest.json.sig" in export_published().files
    assert "manifest.json.sig" not in {f["name"] for f in json.loads(manifest)["files"]}
    assert (export_dir / "current" / "manifest.json.sig").read_text().strip() == signature


def test_a_restored_export_set_is_signed_and_logged_again(
    client, canonical_content, export_dir, django_capture_on_commit_callbacks
):
    """A restore publishes the backup's set (mica.site.backup): staged without its
    signature, it is signed anew and logged as one more publication."""
    import shutil

    from mica.exports.publish import exports_publish_restored

    regenerate(django_capture_on_commit_callbacks)
    staged = export_dir / "builds" / "restore-test"
    shutil.copytree(export_dir / "current", staged)
    (staged / "manifest.json.sig").unlink()
    exports_publish_restored(staged)
    log = log_json(client)
    assert [e["kind"] for e in log["entries"]] == ["exports", "exports"]
    assert verify_chain(log["entries"], [published_key(client)])
    signature = (export_dir / "current" / "manifest.json.sig").read_text()
    manifest = (export_dir / "current" / "manifest.json").read_bytes()
    public_key_load(published_key(client)).verify(base64.b64decode(signature), manifest)


def test_after_a_restart_the_same_key_signs_on(client, canonical_content, key_file):
    """The embedded key is read from its file at each use: a new process finds the same
    key, and the chain goes on under it."""
    append(2)
    key = published_key(client)
    python = "from mica import signing; print(signing.key_id())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(DJANGO_SETTINGS_MODULE="mica.settings", MICA_VAR_DIR=str(key_file.parent))
    restarted = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {python}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert restarted.stdout.strip() == public_key_id(key)
    append(1)
    assert verify_chain(log_json(client)["entries"], [key]) == public_key_id(key)


@pytest.mark.django_db(transaction=True)
def test_after_a_restore_from_backup_the_chain_checks_on_postgresql(
    client, canonical_content, export_dir, settings, tmp_path
):
    """The restored log is the backup's, and the restore's own publication of the backed-up
    set goes on from its last entry; the triggers come back with the tables."""
    import re

    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish

    if connection.vendor != "postgresql":
        assert connection.vendor == "sqlite"  # the embedded restore: the next test
        return
    settings.BACKUP_KEY_FILE = tmp_path / "backup_key"
    regenerate_committed()
    before = log_json(client)["entries"]
    out = io.StringIO()
    call_command("backup", "--output", str(tmp_path / "backups"), stdout=out)
    backup = re.search(r"Backup written to (\S+)", out.getvalue()).group(1)
    edition_publish(edition_id=Edition.objects.get(slug="preview-0.1").pk, actor=LeadFactory())
    assert [e["kind"] for e in log_json(client)["entries"]] == ["exports", "edition"]
    call_command("restore", backup, "--no-input", stdout=io.StringIO())
    log = log_json(client)
    assert log["entries"][:1] == before and [e["kind"] for e in log["entries"]] == [
        "exports",
        "exports",
    ]
    assert verify_chain(log["entries"], [published_key(client)]) == signing.key_id()
    assert refused(f"DELETE FROM {TABLE}")


def regenerate_committed():
    out = io.StringIO()
    call_command("regenerate_exports", "--sync", stdout=out, stderr=io.StringIO())
    return out.getvalue()


READ_LOG = """
import json, django
django.setup()
from mica.content import publication_log as log
print(json.dumps({"entries": [log.entry_document(e) for e in log.publication_log_entries()],
                  "key": log.publication_log_key()[1]}))
"""


@pytest.mark.embedded_only
@pytest.mark.embedded_only
@pytest.mark.django_db(transaction=True)
def test_after_a_restore_from_backup_the_chain_checks_on_sqlite(
    canonical_content, export_dir, settings, tmp_path, key_file
):
    """The embedded deployment, in processes of its own on a file copy of this database:
    backup, a publication after it, restore; the restored chain checks with the key."""
    import re
    import sqlite3
    from contextlib import closing

    if connection.vendor != "sqlite":
        # CI runs embedded_only tests on the SQLite layer; a local run of the whole suite
        # on PostgreSQL says why this one has nothing to copy.
        pytest.skip("the embedded profile's restore copies a SQLite database")
    regenerate_committed()
    var = key_file.parent  # this test's key file is the copy's var/signing_key
    with closing(sqlite3.connect(var / "mica.sqlite3")) as copy:
        connection.connection.backup(copy)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        MICA_VAR_DIR=str(var),
        MICA_EXPORT_DIR=str(export_dir),
        MICA_BUILD_STORE_DIR=str(settings.STORAGES["builds"]["OPTIONS"]["location"]),
        MICA_JOBS_EAGER="1",
    )

    def run(*arguments):
        done = subprocess.run(
            [sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    backup = re.search(
        r"Backup written to (\S+)",
        run("manage.py", "backup", "--output", str(tmp_path / "backups")),
    ).group(1)
    run("manage.py", "regenerate_exports", "--sync", "--full")
    assert len(json.loads(run("-c", READ_LOG))["entries"]) == 2
    assert "Restored the backup" in run("manage.py", "restore", backup, "--no-input")
    restored = json.loads(run("-c", READ_LOG))
    assert [e["kind"] for e in restored["entries"]] == ["exports", "exports"]
    assert verify_chain(restored["entries"], [restored["key"]]) == signing.key_id()


# --- Append-only -----------------------------------------------------------------------------


def refused(sql):
    """Whether the database refuses `sql`, told so by the log's own trigger."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    except DatabaseError as error:
        return "append-only" in str(error)
    return False


def test_raw_sql_cannot_change_or_remove_an_entry(three):
    assert refused(f"UPDATE {TABLE} SET kind = 'bake'")
    assert refused(f"UPDATE {TABLE} SET signature = '' WHERE sequence = 3")
    assert refused(f"DELETE FROM {TABLE} WHERE sequence = 3")
    assert refused(f"DELETE FROM {TABLE}")
    if connection.vendor == "postgresql":
        # TRUNCATE fires no row trigger: a statement trigger refuses it (SQLite has none).
        assert refused(f"TRUNCATE {TABLE}")
    assert [entry_document(e) for e in entries_logged()] == [entry_document(e) for e in three]


def test_the_model_refuses_to_change_or_delete_an_entry(three):
    entry = three[0]
    entry.kind = "bake"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()


@pytest.mark.django_db(transaction=True)
def test_a_flush_empties_the_log_and_the_triggers_stand_after_it(canonical_content):
    from tests.support import database_flush

    append(2)
    database_flush()
    assert not PublicationLogEntry.objects.exists()
    append(1)
    assert refused(f"DELETE FROM {TABLE}")
    assert PublicationLogEntry.objects.count() == 1


# --- The verifier names why a chain fails ---------------------------------------------------


def documents(entries):
    return [entry_document(entry) for entry in entries]


def resigned(document, key):
    """`document` with its digest and signature made anew by `key`."""
    document = {**document, "key_id": public_key_id(key.public_key())}
    document["digest"] = entry_digest(document)
    document["signature"] = signing.sign(canonical(entry_content(document)), key)
    return document


def broken(entries, keys):
    with pytest.raises(ChainBroken) as failed:
        verify_chain(entries, keys)
    return failed.value


def test_the_verifier_fails_naming_the_entry_and_why(three):
    chain, key = documents(three), signing.public_pem()
    assert verify_chain(chain, [key]) == signing.key_id()
    assert verify_chain([], [key]) is None

    removed = broken([chain[0], chain[2]], [key])
    assert removed.sequence == 2 and "one is missing" in str(removed)

    altered = [chain[0], {**chain[1], "subject": {"slug": "another"}}, chain[2]]
    assert "does not match its digest" in str(broken(altered, [key]))

    other = Ed25519PrivateKey.generate()
    assert "no rotation hands over" in broken([*chain[:2], resigned(chain[2], other)], [key]).reason
    forged = {**chain[2], "signature": resigned(chain[2], other)["signature"]}
    assert "signature does not check" in str(broken([*chain[:2], forged], [key]))

    # Re-signed with the site's own key, an altered entry still breaks the link after it.
    rewritten = resigned({**chain[0], "subject": {"build": "another"}}, signing.signing_key())
    relinked = broken([rewritten, *chain[1:]], [key])
    assert relinked.sequence == 2 and "digest of the entry before" in relinked.reason

    stranger = broken(chain, [other.public_key()])
    assert stranger.sequence == 1 and "neither among the given public keys" in stranger.reason
    assert "not a well-formed entry" in str(broken([{**chain[0], "sequence": "1"}], [key]))
    assert "not a well-formed entry" in str(broken(["not an entry"], [key]))


# --- Key rotation ---------------------------------------------------------------------------


def test_after_a_key_rotation_the_chain_still_verifies(client, three, key_file):
    old_key, old_pem = signing.signing_key(), published_key(client)
    out, err = io.StringIO(), io.StringIO()
    call_command("rotate_signing_key", stdout=out, stderr=err)
    assert out.getvalue() == ""  # the embedded key stays in its file, never printed
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    new_id = signing.key_id()
    assert new_id != public_key_id(old_pem)
    append(1)

    log = log_json(client)
    rotation, after = log["entries"][-2:]
    assert rotation["kind"] == "key-rotation" and rotation["key_id"] == public_key_id(old_pem)
    assert rotation["subject"]["new_key_id"] == new_id == after["key_id"] == log["key_id"]
    assert f"entry {rotation['sequence']}" in err.getvalue()
    # Trusting the key published before the rotation is enough: the rotation, signed by
    # it, hands over to the new one, which /transparency/key now serves.
    assert verify_chain(log["entries"], [old_pem]) == new_id
    assert verify_chain(log["entries"], log["keys"].values()) == new_id
    assert public_key_id(published_key(client)) == new_id
    assert set(log["keys"]) == {public_key_id(old_pem), new_id}

    # The retired key signs nothing more: the log refuses it, and a verifier too.
    with pytest.raises(PublicationLogRefused, match="retired"):
        publication_log_append(kind=PublicationKind.BAKE, subject={}, key=old_key)
    late = {
        "sequence": after["sequence"] + 1,
        "at": after["at"],
        "kind": "bake",
        "subject": {},
        "previous_digest": after["digest"],
    }
    retired = broken([*log["entries"], resigned(late, old_key)], [old_pem])
    assert "retired by the key rotation" in retired.reason


def test_in_production_the_rotation_prints_the_new_key_for_the_operator(client, settings):
    settings.SIGNING_KEY_FILE = None
    settings.SIGNING_KEY = signing.private_key_text(Ed25519PrivateKey.generate())
    append(1)
    first = published_key(client)
    out = io.StringIO()
    call_command("rotate_signing_key", stdout=out, stderr=io.StringIO())
    printed = out.getvalue().strip()
    # Until every node is given the new key, the old one is refused, not forked.
    with pytest.raises(PublicationLogRefused, match="MICA_SIGNING_KEY"):
        append(1)
    settings.SIGNING_KEY = printed
    append(1)
    log = log_json(client)
    assert [e["kind"] for e in log["entries"]] == ["exports", "key-rotation", "exports"]
    assert verify_chain(log["entries"], [first]) == public_key_id(published_key(client))


def test_a_key_the_log_never_saw_signs_on_where_the_old_one_was_lost(client, key_file):
    """A restore on a new machine (var/signing_key not copied) signs with a new key: the
    log takes it, and a verifier that is given the new key sees where it took over."""
    append(2)
    lost = published_key(client)
    key_file.unlink()
    append(1)
    log = log_json(client)
    assert log["entries"][2]["key_id"] != public_key_id(lost)
    assert "no rotation hands over" in broken(log["entries"], [lost]).reason
    assert verify_chain(log["entries"], [lost, published_key(client)]) == log["key_id"]


# --- The key --------------------------------------------------------------------------------


def test_the_embedded_key_file_is_made_private_on_first_use_and_reused(key_file):
    assert not key_file.exists()
    made = signing.key_id()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert signing.key_id() == made
    key_file.chmod(0o644)
    assert signing.key_id() == made
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key_file.write_text("not a key")
    with pytest.raises(signing.SigningKeyUnavailable, match="cannot be made or read"):
        signing.key_id()


def test_the_key_is_read_from_pem_or_base64(settings):
    key = Ed25519PrivateKey.generate()
    expected = public_key_id(key.public_key())
    for text in (signing.private_key_text(key), signing.private_key_pem(key)):
        settings.SIGNING_KEY = text
        assert signing.key_id() == expected
    settings.SIGNING_KEY = "bm90IGEga2V5"
    with pytest.raises(signing.SigningKeyUnavailable, match="MICA_SIGNING_KEY"):
        signing.key_id()


def test_the_system_checks_refuse_production_without_a_readable_key(settings, key_file):
    settings.SIGNING_KEY_FILE = None
    assert [e.id for e in signing.production_has_a_signing_key(None)] == ["mica.E110"]
    settings.SIGNING_KEY = "junk"
    assert [e.id for e in signing.the_signing_key_reads(None)] == ["mica.E111"]
    assert signing.production_has_a_signing_key(None) == []
    settings.SIGNING_KEY, settings.WEB_NODES = "", 2
    assert signing.the_signing_key_reads(None) == []  # production: mica.E110 says it
    settings.SIGNING_KEY_FILE = key_file
    assert [e.id for e in signing.the_signing_key_reads(None)] == ["mica.W112"]


@pytest.mark.embedded_only
def test_check_deploy_fails_in_production_without_the_signing_key(tmp_path):
    from tests.mica.test_settings_profiles import PRODUCTION_ENV, _clean_env

    without = {k: v for k, v in PRODUCTION_ENV.items() if k != "MICA_SIGNING_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_clean_env(tmp_path, **without),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "mica.E110" in result.stdout + result.stderr
    assert not (tmp_path / "signing_key").exists()  # never made on a production machine


def test_the_key_in_force_is_served_before_the_first_entry_and_never_a_500(client, settings):
    assert public_key_id(published_key(client)) == signing.key_id()
    settings.SIGNING_KEY_FILE = None
    assert client.get("/transparency/key").status_code == 404
    assert client.post("/transparency/key").status_code == 405


# --- The pages ------------------------------------------------------------------------------


@pytest.mark.parametrize(("prefix", "language"), [("", "en"), ("/ko", "ko")])
def test_the_log_page_answers_in_both_languages(client, three, prefix, language):
    response = client.get(f"{prefix}/transparency/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f'<html lang="{language}"' in page
    heading = {"en": "<h1>Publication log</h1>", "ko": "<h1>게시 기록</h1>"}[language]
    assert heading in page
    # Newest first, each entry linking what it published.
    assert page.index('id="entry-3"') < page.index('id="entry-2"') < page.index('id="entry-1"')
    assert f'href="{prefix}/downloads/"' in page
    assert f'href="{prefix}/editions/preview-0.1/"' in page
    label = {"en": "Edition Preview 0.1", "ko": "프리뷰 0.1 에디션"}[language]
    assert label in page
    digest = three[2].digest
    assert f'title="{digest}">{digest[:12]}…</code>' in page
    assert f"<code>{signing.key_id()}</code>" in page
    assert f'href="{prefix}/transparency/log.json"' in page


def test_a_holdout_reveal_links_the_task_it_made_public(client, three):
    publication_log_append(
        kind=PublicationKind.HOLDOUT_REVEAL,
        subject={"task": "a-task-made-public", "salt": "s", "opens": []},
    )
    page = client.get("/ko/transparency/").content.decode()
    assert 'href="/ko/tasks/a-task-made-public/"' in page
    assert "홀드아웃에서 공개된 과제 a-task-made-public" in page


def test_the_log_page_is_in_the_sitemap_and_the_footer(client, three):
    sitemap = client.get("/sitemap.xml").content.decode()
    assert "/transparency/</loc>" in sitemap and "/ko/transparency/" in sitemap
    home = client.get("/ko/").content.decode()
    assert 'href="/ko/transparency/"' in home


def test_the_log_page_is_paginated_and_takes_any_page_number(client, canonical_content):
    append(55)
    first = client.get("/transparency/").content.decode()
    assert first.count('<tr id="entry-') == 50 and 'id="entry-55"' in first
    assert 'href="/transparency/?page=2" rel="next"' in first
    second = client.get("/transparency/?page=2").content.decode()
    assert second.count('<tr id="entry-') == 5 and 'id="entry-1"' in second
    assert 'href="/transparency/" rel="prev"' in second
    for asked in ("0", "-1", "abc", "99999999999999999999", "2.5", "%00"):
        assert client.get(f"/transparency/?page={asked}").status_code in (200, 400), asked


def test_the_log_page_costs_the_same_queries_however_long_the_log(
    client, canonical_content, django_assert_max_num_queries
):
    append(3)
    with django_assert_max_num_queries(5) as short:
        assert client.get("/transparency/").status_code == 200
    append(47)
    with django_assert_max_num_queries(5) as long:
        assert client.get("/ko/transparency/").status_code == 200
    assert len(long.captured_queries) == len(short.captured_queries)


def test_the_log_answers_not_modified_while_it_has_not_grown(client, three):
    response = client.get("/transparency/log.json")
    etag = response["ETag"]
    assert client.get("/transparency/log.json", HTTP_IF_NONE_MATCH=etag).status_code == 304
    append(1)
    assert client.get("/transparency/log.json", HTTP_IF_NONE_MATCH=etag).status_code == 200
