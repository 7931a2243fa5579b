"""Backups that restore: `manage.py backup` and `manage.py restore` round trips on SQLite and
on PostgreSQL, and bad input refused with a clear message and nothing changed.

The commands run in fresh interpreters, as an operator runs them, against a deployment
of this module's own: a var directory (the SQLite file, the exports, the backups) and,
for PostgreSQL, a scratch database created for the module and dropped after it.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.support import require

ROOT = Path(__file__).resolve().parents[3]
# A migration as a backup names its app's latest: "0010_contract_items_numbered_…".
MIGRATION_NAME_RE = re.compile(r"^\d{4}_\w+$")
BACKUP_NAME_RE = re.compile(r"^mica-backup-\d{8}T\d{6}Z$")
CHANGED = "Changed after the backup, to be undone by the restore."
# Edits the first glossary term through the ORM, as the admin would; the revision moves.
EDIT = f"""
from mica.methodology.models import GlossaryTerm
term = GlossaryTerm.objects.order_by("pk").first()
term.definition_en = {CHANGED!r}
term.save()
"""
DJANGO = "import django\ndjango.setup()\n"


class Site:
    """One deployment: its own var directory and database, driven through manage.py."""

    def __init__(self, var_dir, database_url=None):
        self.var_dir = Path(var_dir)
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("MICA_") and key != "DJANGO_ALLOW_ASYNC_UNSAFE"
        }
        self.env.update(
            DJANGO_SETTINGS_MODULE="mica.settings",
            MICA_VAR_DIR=str(self.var_dir),
            MICA_LOG_LEVEL="ERROR",
        )
        if database_url:
            self.env["MICA_DATABASE_URL"] = database_url
        self.database_url = database_url

    def run(self, *command, prefix=(), stdin=None, env=None):
        return subprocess.run(
            [*prefix, sys.executable, *command],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=600,
        )

    def manage(self, *arguments, **options):
        result = self.run("manage.py", *arguments, **options)
        assert result.returncode == 0, f"manage.py {arguments}:\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def python(self, code):
        result = self.run("-c", DJANGO + textwrap.dedent(code))
        assert result.returncode == 0, result.stderr
        return result.stdout

    def set_up(self):
        self.manage("migrate", "--no-input")
        self.manage("load_canonical_content")
        self.manage("regenerate_exports", "--sync")

    def backup(self, *arguments, env=None):
        result = self.run("manage.py", "backup", *arguments, env=env)
        assert result.returncode == 0, f"backup {arguments}:\n{result.stdout}\n{result.stderr}"
        output = result.stdout
        assert "[100%] Backup written to" in output
        return Path(output.strip().splitlines()[-1].removeprefix("Backup written to ").strip())

    @property
    def exports(self):
        return self.var_dir / "exports"

    @property
    def backup_key(self):
        """The embedded profile's backup key, made by the first backup."""
        return (self.var_dir / "backup_key").read_text().strip()

    def export_state(self):
        """(the directory `current` names, the published manifest, the builds on disk)."""
        current = self.exports / "current"
        return (
            os.readlink(current),
            (current / "manifest.json").read_bytes(),
            sorted(os.listdir(self.exports / "builds")),
        )

    def query(self, sql):
        """The one row `sql` selects, read straight from the database."""
        if self.database_url:
            [row] = _psql(self.database_url, sql)
            return row
        return _sqlite_row(self.var_dir / "mica.sqlite3", sql)

    def first_term(self):
        """The English definition of the first glossary term."""
        sql = "SELECT definition_en FROM methodology_glossaryterm ORDER BY id LIMIT 1"
        return self.query(sql)[0]

    def revision_changed_at(self):
        """When the glossary's revision last moved: it keys the cached pages that show it."""
        sql = (
            "SELECT changed_at FROM content_tablerevision"
            " WHERE table_name = 'methodology_glossaryterm'"
        )
        changed_at = self.query(sql)[0]
        return changed_at if self.database_url else datetime.fromisoformat(changed_at)


def _sqlite_row(path, sql):
    with closing(sqlite3.connect(path)) as database:
        return database.execute(sql).fetchone()


def _digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _sqlite_state(site):
    """Everything a refused restore must leave alone: the database file byte for byte
    (the content revision included) and the published exports."""
    return _digest(site.var_dir / "mica.sqlite3"), site.export_state()


def _manifest_rewrite(backup, change, key=None):
    """Change a backup's manifest; with `key`, sign it anew, as only its holder can."""
    path = backup / "backup.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))
    if key is not None:
        _sign(backup, key)


def _sign(backup, key):
    """backup.json.hmac as the README describes it: HMAC-SHA256 of backup.json's bytes."""
    signature = json.loads((backup / "backup.json.hmac").read_text())
    data = (backup / "backup.json").read_bytes()
    signature["hmac"] = hmac.new(key.encode(), data, hashlib.sha256).hexdigest()
    (backup / "backup.json.hmac").write_text(json.dumps(signature))


def _key_of(backup):
    """The key of the deployment that made `backup` (its var/backup_key)."""
    return (backup.parent.parent / "backup_key").read_text().strip()


def _copy(backup, tmp_path, name="copy"):
    return Path(shutil.copytree(backup, tmp_path / name))


def _unprivileged():
    """A command prefix under which file permissions bind, even for root."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    if not shutil.which("setpriv") or subprocess.run([*prefix, "true"]).returncode != 0:
        pytest.skip("running as root without setpriv: file permissions do not bind")
    return prefix


def _assert_refused(result, *fragments):
    assert result.returncode != 0, result.stdout
    assert "CommandError: " in result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.fixture(scope="module")
def sqlite_site(tmp_path_factory):
    """A migrated SQLite deployment with the canonical content, published exports and one
    backup made before anything changed: (site, backup)."""
    site = Site(tmp_path_factory.mktemp("sqlite-site"))
    site.set_up()
    return site, site.backup()


@pytest.mark.embedded_only
def test_a_sqlite_backup_holds_the_database_the_exports_and_their_checksums(sqlite_site):
    site, backup = sqlite_site
    assert backup.parent == site.var_dir / "backups"
    assert BACKUP_NAME_RE.match(backup.name)
    assert backup.stat().st_mode & 0o777 == 0o700  # the whole database: the owner's only
    assert not [p for p in backup.parent.iterdir() if p.name.endswith(".partial")]
    manifest = json.loads((backup / "backup.json").read_text())
    assert manifest["engine"] == "sqlite" and manifest["database_file"] == "database.sqlite3"
    assert MIGRATION_NAME_RE.match(manifest["migrations"]["site"])
    assert MIGRATION_NAME_RE.match(manifest["migrations"]["methodology"])
    for entry in manifest["files"]:
        assert _digest(backup / entry["name"]) == entry["sha256"], entry["name"]
        assert (backup / entry["name"]).stat().st_size == entry["size"]
    published = json.loads((site.exports / "current" / "manifest.json").read_text())
    assert (backup / "exports" / "manifest.json").read_bytes() == (
        site.exports / "current" / "manifest.json"
    ).read_bytes()
    # The export set whole: its files, its manifest and the manifest's signature.
    signed = [{"name": "manifest.json"}, {"name": "manifest.json.sig"}]
    assert {f["name"] for f in manifest["files"]} == {"database.sqlite3"} | {
        f"exports/{f['name']}" for f in published["files"] + signed
    }
    assert manifest["exports"]["inputs_sha256"] == published["inputs_sha256"]
    assert _sqlite_row(backup / "database.sqlite3", "PRAGMA integrity_check") == ("ok",)


@pytest.mark.embedded_only
def test_a_backup_and_the_embedded_secrets_are_their_owners_only(sqlite_site):
    """Issue 33, item 4: "files are written 0600; the embedded profile's var/secret_key and
    database are 0600", and the key that signs backups is in none of them."""
    site, backup = sqlite_site
    files = [path for path in backup.rglob("*") if path.is_file()]
    folders = [path for path in backup.rglob("*") if path.is_dir()]
    assert files and folders
    for path in files:
        assert path.stat().st_mode & 0o777 == 0o600, path
    for path in folders:
        assert path.stat().st_mode & 0o777 == 0o700, path
    for name in ("secret_key", "mica.sqlite3", "backup_key"):
        assert (site.var_dir / name).stat().st_mode & 0o777 == 0o600, name
    key = site.backup_key.encode()
    assert len(key) >= 32
    assert not [path for path in files if key in path.read_bytes()]
    # A deployment an older release left readable by others is narrowed at start.
    (site.var_dir / "secret_key").chmod(0o644)
    (site.var_dir / "mica.sqlite3").chmod(0o644)
    site.manage("check")
    assert (site.var_dir / "secret_key").stat().st_mode & 0o777 == 0o600
    assert (site.var_dir / "mica.sqlite3").stat().st_mode & 0o777 == 0o600


@pytest.mark.embedded_only
def test_the_manifest_is_signed_with_the_configured_key(sqlite_site, tmp_path):
    """MICA_BACKUP_KEY signs backup.json (HMAC-SHA256 of its bytes, as the README says), and
    a deployment with another key refuses the backup before it changes anything."""
    site, _backup = sqlite_site
    key = secrets.token_urlsafe(32)
    backup = site.backup("--output", str(tmp_path), env={"MICA_BACKUP_KEY": key})
    signature = json.loads((backup / "backup.json.hmac").read_text())
    assert signature["algorithm"] == "HMAC-SHA256"
    expected = hmac.new(key.encode(), (backup / "backup.json").read_bytes(), hashlib.sha256)
    assert signature["hmac"] == expected.hexdigest()
    before = _sqlite_state(site)
    result = site.run("manage.py", "restore", "--no-input", str(backup))  # var/backup_key
    _assert_refused(result, "signed with another backup key")
    assert _sqlite_state(site) == before


@pytest.mark.embedded_only
def test_a_backup_beside_its_key_or_without_a_configured_key_is_refused(sqlite_site, tmp_path):
    site, _backup = sqlite_site
    _assert_refused(
        site.run("manage.py", "backup", "--output", str(site.var_dir)),
        f"The backup key {site.var_dir / 'backup_key'} lies under {site.var_dir}",
    )
    assert not list(site.var_dir.glob("mica-backup-*"))
    # In production the key is set, never made on one machine.
    production = {"MICA_SECRET_KEY": secrets.token_urlsafe(50)}
    for command in (["backup", "--output", str(tmp_path)], ["restore", "--no-input", "x"]):
        result = site.run("manage.py", *command, env=production)
        _assert_refused(result, "Set MICA_BACKUP_KEY")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.embedded_only
def test_sqlite_backup_change_restore_finds_the_original(sqlite_site, tmp_path):
    site, _backup = sqlite_site
    original_term = site.first_term()
    original_manifest = (site.exports / "current" / "manifest.json").read_bytes()
    backup = site.backup("--output", str(tmp_path / "kept"))
    assert backup.parent == tmp_path / "kept"

    site.python(EDIT)
    site.manage("regenerate_exports", "--sync")
    assert site.first_term() == CHANGED
    assert (site.exports / "current" / "manifest.json").read_bytes() != original_manifest
    revision_before = site.revision_changed_at()

    output = site.manage("restore", "--no-input", str(backup))
    assert "[100%] Restored the backup of" in output
    assert site.first_term() == original_term
    assert (site.exports / "current" / "manifest.json").read_bytes() == original_manifest
    # A new revision: no page cached before the restore is served after it.
    assert site.revision_changed_at() > revision_before
    backed_up = json.loads((backup / "backup.json").read_text())
    assert backed_up["files"]
    assert all(_digest(backup / e["name"]) == e["sha256"] for e in backed_up["files"])


@pytest.mark.embedded_only
def test_a_sqlite_backup_is_one_committed_state_while_a_write_is_open(sqlite_site, tmp_path):
    site, _backup = sqlite_site
    original_term = site.first_term()
    writer = sqlite3.connect(site.var_dir / "mica.sqlite3", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "UPDATE methodology_glossaryterm SET definition_en = ? "
            "WHERE id = (SELECT MIN(id) FROM methodology_glossaryterm)",
            ["half-written"],
        )
        backup = site.backup("--output", str(tmp_path))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    (definition,) = _sqlite_row(
        backup / "database.sqlite3",
        "SELECT definition_en FROM methodology_glossaryterm ORDER BY id LIMIT 1",
    )
    assert definition == original_term


@pytest.mark.embedded_only
def test_a_sqlite_backup_restores_onto_a_fresh_machine(sqlite_site, tmp_path):
    site, backup = sqlite_site
    fresh = Site(tmp_path / "fresh-var")  # no database, no exports yet
    # Without the key of the deployment that made it, the backup is not believed.
    _assert_refused(
        fresh.run("manage.py", "restore", "--no-input", str(backup)),
        "This machine has no backup key",
        "set MICA_BACKUP_KEY",
    )
    assert not (fresh.var_dir / "backup_key").exists()
    fresh.env["MICA_BACKUP_KEY"] = site.backup_key
    fresh.manage("restore", "--no-input", str(backup))
    assert (
        fresh.first_term()
        == _sqlite_row(
            backup / "database.sqlite3",
            "SELECT definition_en FROM methodology_glossaryterm ORDER BY id LIMIT 1",
        )[0]
    )
    assert (fresh.exports / "current" / "manifest.json").read_bytes() == (
        backup / "exports" / "manifest.json"
    ).read_bytes()
    fresh.manage("migrate", "--check")  # the schema is the release's: nothing left to apply


@pytest.mark.embedded_only
def test_a_backup_before_any_export_restores_the_database_and_leaves_the_exports(
    sqlite_site, tmp_path
):
    site, _backup = sqlite_site
    # What is published is the database's to say (its pointer), whatever a node's disk holds.
    unpublished = Site(tmp_path / "no-exports-yet")
    unpublished.manage("migrate", "--no-input")
    output = unpublished.manage("backup", "--output", str(tmp_path / "backups"))
    assert "No export set has been published yet" in output
    backup = next((tmp_path / "backups").glob("mica-backup-*"))
    assert json.loads((backup / "backup.json").read_text())["exports"] is None
    assert not (backup / "exports").exists()

    before = site.export_state()
    env = {"MICA_BACKUP_KEY": unpublished.backup_key}  # the key of the deployment that made it
    output = site.manage("restore", "--no-input", str(backup), env=env)
    assert "the published set was left as it was" in output
    assert site.export_state() == before


def _missing(backup, tmp):
    return tmp / "nowhere"


def _a_file(backup, tmp):
    return backup / "database.sqlite3"


def _no_manifest(backup, tmp):
    return backup / "exports"


def _manifest_not_json(backup, tmp):
    copy = _copy(backup, tmp)
    (copy / "backup.json").write_text("{ not json")
    _sign(copy, _key_of(backup))
    return copy


def _damaged_export(backup, tmp):
    copy = _copy(backup, tmp)
    with open(copy / "exports" / "mica-catalogue.json", "ab") as stream:
        stream.write(b" ")
    return copy


def _damaged_database(backup, tmp):
    copy = _copy(backup, tmp)
    path = copy / "database.sqlite3"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    return copy


def _missing_file(backup, tmp):
    copy = _copy(backup, tmp)
    (copy / "exports" / "mica-gate.csv").unlink()
    return copy


def _other_engine(backup, tmp):
    copy = _copy(backup, tmp)
    _manifest_rewrite(copy, lambda manifest: manifest.update(engine="postgresql"), _key_of(backup))
    return copy


def _newer_release(backup, tmp):
    copy = _copy(backup, tmp)
    _manifest_rewrite(
        copy, lambda manifest: manifest["migrations"].update(site="9999_future"), _key_of(backup)
    )
    return copy


def _escaping_name(backup, tmp):
    copy = _copy(backup, tmp)
    outside = {"name": "../secret_key", "size": 1, "sha256": "0"}
    _manifest_rewrite(copy, lambda manifest: manifest["files"].append(outside), _key_of(backup))
    return copy


def _rehashed(backup, tmp):
    """The database swapped for another and its size and checksum written anew: every
    check a manifest alone can make passes."""
    copy = _copy(backup, tmp)
    database = copy / "database.sqlite3"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("UPDATE methodology_glossaryterm SET definition_en = 'planted'")
        connection.commit()

    def rehash(manifest):
        entry = next(e for e in manifest["files"] if e["name"] == "database.sqlite3")
        entry.update(size=database.stat().st_size, sha256=_digest(database))

    _manifest_rewrite(copy, rehash)
    return copy


def _unsigned(backup, tmp):
    copy = _copy(backup, tmp)
    (copy / "backup.json.hmac").unlink()
    return copy


def _signed_with_another_key(backup, tmp):
    copy = _copy(backup, tmp)
    signature = json.loads((copy / "backup.json.hmac").read_text())
    signature["key_id"] = "0" * len(signature["key_id"])
    (copy / "backup.json.hmac").write_text(json.dumps(signature))
    _sign(copy, "a key this deployment does not hold")
    return copy


BAD_BACKUPS = {
    "missing": (_missing, ["There is no backup at"]),
    "a file": (_a_file, ["is not a backup: a backup is a directory holding backup.json"]),
    "no manifest": (_no_manifest, ["is not a backup: it holds no backup.json"]),
    "manifest not JSON": (_manifest_not_json, ["is not a backup manifest"]),
    "damaged export": (
        _damaged_export,
        ["exports/mica-catalogue.json does not match its checksum", "the backup is damaged"],
    ),
    "damaged database": (_damaged_database, ["database.sqlite3 does not match its checksum"]),
    "missing file": (_missing_file, ["exports/mica-gate.csv is missing from the backup"]),
    "other engine": (
        _other_engine,
        ["This backup holds a PostgreSQL database and the configured database is SQLite"],
    ),
    "newer release": (_newer_release, ["migrations this one lacks (site.9999_future)"]),
    "escaping name": (_escaping_name, ["is not a backup manifest this release reads"]),
    "re-hashed manifest": (
        _rehashed,
        ["backup.json does not match its signature: the backup was altered"],
    ),
    "unsigned": (_unsigned, ["holds no readable signature of its manifest (backup.json.hmac)"]),
    "another key": (_signed_with_another_key, ["signed with another backup key"]),
}


@pytest.mark.parametrize("case", BAD_BACKUPS)
@pytest.mark.embedded_only
def test_a_bad_backup_is_refused_with_the_reason_and_nothing_changes(sqlite_site, tmp_path, case):
    site, backup = sqlite_site
    make, fragments = BAD_BACKUPS[case]
    bad = make(backup, tmp_path)
    before = _sqlite_state(site)
    result = site.run("manage.py", "restore", "--no-input", str(bad))
    _assert_refused(result, *fragments)
    assert _sqlite_state(site) == before


@pytest.mark.embedded_only
def test_an_unreadable_backup_is_refused_and_nothing_changes(sqlite_site, tmp_path):
    site, backup = sqlite_site
    copy = _copy(backup, tmp_path)
    before = _sqlite_state(site)
    copy.chmod(0)
    try:
        result = site.run("manage.py", "restore", "--no-input", str(copy), prefix=_unprivileged())
    finally:
        copy.chmod(0o700)
    _assert_refused(result, f"{copy} cannot be read: Permission denied")
    assert _sqlite_state(site) == before


@pytest.mark.embedded_only
def test_a_restore_not_confirmed_changes_nothing(sqlite_site):
    site, backup = sqlite_site
    before = _sqlite_state(site)
    result = site.run("manage.py", "restore", str(backup), stdin="no\n")
    _assert_refused(result, "Restore cancelled; nothing was changed.")
    assert "Type 'yes' to continue" in result.stdout
    assert _sqlite_state(site) == before


@pytest.mark.embedded_only
def test_a_backup_to_a_place_that_cannot_hold_one_is_refused(sqlite_site, tmp_path):
    site, _backup = sqlite_site
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    result = site.run("manage.py", "backup", "--output", str(a_file))
    _assert_refused(result, f"{a_file} is not a directory.")

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        result = site.run("manage.py", "backup", "--output", str(locked), prefix=_unprivileged())
    finally:
        locked.chmod(0o700)
    _assert_refused(result, f"A backup cannot be written under {locked}: Permission denied")
    assert list(locked.iterdir()) == []


# --- The object store ----------------------------------------------------------------


@pytest.mark.embedded_only
def test_with_a_bucket_backups_go_to_the_object_store_and_restore_from_there(
    object_store, tmp_path
):
    """Issue 31, item 2: with MICA_S3_BUCKET set, "exports, baked pages and backups are
    written through django-storages / boto3"; restore reads the backup from the store, and
    refuses one whose manifest was re-hashed there."""
    from tests.conftest import ObjectStore

    store, bucket = object_store
    prefix = f"test-{secrets.token_hex(6)}"
    site = Site(tmp_path / "var")
    site.env.update(
        MICA_S3_BUCKET=bucket,
        MICA_S3_ENDPOINT_URL=store.endpoint,
        MICA_S3_REGION="us-east-1",
        MICA_S3_PREFIX=prefix,
        **ObjectStore.ACCESS,
    )
    site.set_up()
    original = site.first_term()
    name = str(site.backup())
    assert re.match(r"^backups/mica-backup-\d{8}T\d{6}Z$", name), name
    assert not list((site.var_dir / "backups").glob("mica-backup-*"))  # no copy left here
    s3 = store.client()
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/{name}/")["Contents"]
    keys = {entry["Key"].removeprefix(f"{prefix}/{name}/") for entry in listed}
    assert {"backup.json", "backup.json.hmac", "database.sqlite3", "exports/manifest.json"} <= keys

    site.python(EDIT)
    assert site.first_term() == CHANGED
    manifest_key = f"{prefix}/{name}/backup.json"
    database_key = f"{prefix}/{name}/database.sqlite3"
    manifest_bytes = s3.get_object(Bucket=bucket, Key=manifest_key)["Body"].read()
    database_bytes = s3.get_object(Bucket=bucket, Key=database_key)["Body"].read()
    planted = tmp_path / "planted.sqlite3"
    shutil.copyfile(site.var_dir / "mica.sqlite3", planted)
    manifest = json.loads(manifest_bytes)
    entry = next(e for e in manifest["files"] if e["name"] == "database.sqlite3")
    entry.update(size=planted.stat().st_size, sha256=_digest(planted))
    s3.put_object(Bucket=bucket, Key=manifest_key, Body=json.dumps(manifest).encode())
    s3.put_object(Bucket=bucket, Key=database_key, Body=planted.read_bytes())
    before = _digest(site.var_dir / "mica.sqlite3")
    result = site.run("manage.py", "restore", "--no-input", name.removeprefix("backups/"))
    _assert_refused(result, "backup.json does not match its signature")
    assert _digest(site.var_dir / "mica.sqlite3") == before
    assert not list(site.var_dir.glob(".restore-*"))  # the fetched copy is gone

    assert "There is no backup named mica-backup-19990101T000000Z in the object store" in (
        site.run("manage.py", "restore", "--no-input", "mica-backup-19990101T000000Z").stderr
    )
    s3.put_object(Bucket=bucket, Key=manifest_key, Body=manifest_bytes)
    s3.put_object(Bucket=bucket, Key=database_key, Body=database_bytes)
    output = site.manage("restore", "--no-input", name.removeprefix("backups/"))
    assert "Fetching mica-backup-" in output and "[100%] Restored the backup of" in output
    assert site.first_term() == original
    assert not list(site.var_dir.glob(".restore-*"))


# --- PostgreSQL -------------------------------------------------------------------


def _server_url(database):
    parts = urlsplit(os.environ["MICA_DATABASE_URL"])
    return urlunsplit(parts._replace(path=f"/{database}"))


def _psql(url, sql):
    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(sql)
        return cursor.fetchall() if cursor.description else None


def _postgres_state(site):
    """The rows a restore changes and a refusal must leave alone, and the exports."""
    rows = _psql(
        site.database_url,
        """
        SELECT
          (SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM methodology_glossaryterm t),
          (SELECT md5(string_agg(r::text, '|' ORDER BY table_name)) FROM content_tablerevision r),
          (SELECT count(*) FROM catalogue_taskdefinition),
          (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables
             WHERE schemaname = 'public')
        """,
    )
    return rows, site.export_state()


@pytest.fixture(scope="module")
def postgres_site(tmp_path_factory):
    """A migrated deployment on a scratch PostgreSQL database of its own, with content,
    exports and one backup made before anything changed: (site, backup)."""
    require(os.environ.get("MICA_DATABASE_URL"), "MICA_DATABASE_URL is not set: no PostgreSQL")
    for program in ("pg_dump", "pg_restore", "psql"):
        require(shutil.which(program), f"{program} (Debian's postgresql-client) is not installed")
    name = f"mica_backup_test_{secrets.token_hex(4)}"
    maintenance = _server_url("postgres")
    try:
        _psql(maintenance, f'CREATE DATABASE "{name}"')
        site = Site(tmp_path_factory.mktemp("postgres-site"), database_url=_server_url(name))
        site.set_up()
        yield site, site.backup()
    finally:
        _psql(maintenance, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_postgres_backup_change_restore_finds_the_original(postgres_site, tmp_path):
    site, _backup = postgres_site
    original_term = site.first_term()
    original_manifest = (site.exports / "current" / "manifest.json").read_bytes()
    backup = site.backup("--output", str(tmp_path))
    manifest = json.loads((backup / "backup.json").read_text())
    assert manifest["engine"] == "postgresql" and manifest["database_file"] == "database.pgdump"
    assert MIGRATION_NAME_RE.match(manifest["migrations"]["site"])
    assert (backup / "database.pgdump").read_bytes().startswith(b"PGDMP")  # the custom format

    site.python(EDIT)
    site.manage("regenerate_exports", "--sync")
    assert site.first_term() == CHANGED
    revision_before = site.revision_changed_at()

    output = site.manage("restore", "--no-input", str(backup))
    assert "[100%] Restored the backup of" in output
    assert site.first_term() == original_term
    assert (site.exports / "current" / "manifest.json").read_bytes() == original_manifest
    assert site.revision_changed_at() > revision_before


@pytest.mark.postgres
def test_a_postgres_restore_drops_the_tables_of_later_migrations(postgres_site, tmp_path):
    """A backup from before a migration restores into a database migrated since: the later
    tables would survive pg_restore --clean (and their foreign keys stop it)."""
    site, _backup = postgres_site
    site.manage("migrate", "axes", "zero")  # the sign-in records: no other app's tables need them
    try:
        backup = site.backup("--output", str(tmp_path))
    finally:
        site.manage("migrate")
    output = site.manage("restore", "--no-input", str(backup))
    assert "Dropped axes_accessattempt: the backup predates it." in output
    assert "run `manage.py migrate`" in output
    site.manage("migrate")  # the release's migrations apply cleanly over the restored backup
    assert _psql(site.database_url, "SELECT count(*) FROM axes_accessattempt") == [(0,)]


@pytest.mark.postgres
def test_a_dump_that_breaks_mid_restore_leaves_the_database_as_it_was(postgres_site, tmp_path):
    site, backup = postgres_site
    copy = _copy(backup, tmp_path)
    dump = copy / "database.pgdump"
    dump.write_bytes(dump.read_bytes()[: dump.stat().st_size * 2 // 3])

    def truncated(manifest):  # its table of contents intact, its data cut short
        entry = next(e for e in manifest["files"] if e["name"] == "database.pgdump")
        entry.update(size=dump.stat().st_size, sha256=_digest(dump))

    _manifest_rewrite(copy, truncated, site.backup_key)
    site.python(EDIT)
    before = _postgres_state(site)
    result = site.run("manage.py", "restore", "--no-input", str(copy))
    _assert_refused(result, "pg_restore failed; the database was left as it was")
    assert _postgres_state(site) == before
    assert site.first_term() == CHANGED


@pytest.mark.postgres
def test_a_backup_of_the_other_engine_is_refused_both_ways(postgres_site, sqlite_site):
    postgres, postgres_backup = postgres_site
    sqlite, sqlite_backup = sqlite_site
    before = _postgres_state(postgres)
    # Each backup with its own deployment's key: the engine is what is refused.
    result = postgres.run(
        "manage.py",
        "restore",
        "--no-input",
        str(sqlite_backup),
        env={"MICA_BACKUP_KEY": sqlite.backup_key},
    )
    _assert_refused(result, "holds a SQLite database and the configured database is PostgreSQL")
    assert _postgres_state(postgres) == before

    before = _sqlite_state(sqlite)
    result = sqlite.run(
        "manage.py",
        "restore",
        "--no-input",
        str(postgres_backup),
        env={"MICA_BACKUP_KEY": postgres.backup_key},
    )
    _assert_refused(result, "holds a PostgreSQL database and the configured database is SQLite")
    assert _sqlite_state(sqlite) == before


@pytest.mark.postgres
def test_a_bad_postgres_backup_is_refused_and_nothing_changes(postgres_site, tmp_path):
    site, backup = postgres_site
    copy = _copy(backup, tmp_path)
    with open(copy / "database.pgdump", "ab") as stream:
        stream.write(b"\0")
    before = _postgres_state(site)
    result = site.run("manage.py", "restore", "--no-input", str(copy))
    _assert_refused(result, "database.pgdump does not match its checksum")
    assert _postgres_state(site) == before
