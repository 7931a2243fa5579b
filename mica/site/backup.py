"""Backups that restore: the database and the published export set, checked end to end.

    backup_write(destination=DIR)  writes DIR/mica-backup-<UTC time>/
    backup_check(source=PATH)      the manifest of a sound backup, or BackupRefused
    backup_restore(source=PATH)    brings the database and the published set back

A backup is one plain directory, not a .tar.gz:

    mica-backup-20260301T023000Z/
      backup.json        the manifest: engine, migration state, time, every file's SHA-256
      database.sqlite3   SQLite: a copy made through the online backup API
      database.pgdump    PostgreSQL: pg_dump --format=custom (compressed already)
      exports/           the published export set, its manifest.json included

The manifest is signed: backup.json.hmac holds an HMAC-SHA256 of backup.json's exact
bytes under the backup key (MICA_BACKUP_KEY; in the embedded profile var/backup_key,
made 0600 by the first backup), which no backup holds. A restore refuses a backup
whose manifest the key did not sign before it looks at anything else, so a backup
altered and re-hashed (a database swapped, its checksum written anew) is refused and
nothing changes. Every file of a backup is its owner's only (0600, folders 0700).

With MICA_S3_BUCKET set, `backup` sends the finished directory to the object store of
the published builds (mica.content.builds), under `backups/<name>/`, its manifest and
signature last, and keeps no copy on the machine; `restore <name>` fetches it into a
private temporary folder and restores from there, with the same checks.

A directory because restore checks every file against its checksum where it
lies, with no unpacking into temporary space first; because rsync, restic or borg
copy it off the machine file by file, unchanged exports and all, where one
archive would be new bytes every night; and because the bulky half, the
PostgreSQL dump, is compressed already. It is written under a hidden
`.mica-backup-….partial` name and renamed only once backup.json is in it, so a
directory named mica-backup-* is always complete. It holds the whole database,
password hashes and API tokens included, so it is made readable by its owner only.

The SQLite copy goes through `sqlite3.Connection.backup()` from the live file: the
copy is one committed state even while the site writes. pg_dump reads one
snapshot. A restore checks everything first (the manifest, every checksum, the
engine, the migration state, the dump itself, that the targets can be written)
and changes nothing when any check fails. Then it stages the export set beside
the published one, restores the database (SQLite through the backup API, which
writes in one transaction; PostgreSQL with pg_restore --clean --if-exists
--no-owner, run in one transaction: see _pg_restore),
switches the `current` export link in one step, as the publisher does, and moves
the content revision so that no page cached before the restore is served after it.
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
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path, PurePosixPath

import django
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone
from django.utils.translation import gettext as _

from mica.content.builds import build_store, file_digest
from mica.content.changes import revisions_bump_all
from mica.errors import DomainError
from mica.exports.publish import exports_publish_restored
from mica.exports.registry import MANIFEST as EXPORT_MANIFEST
from mica.exports.selectors import export_file_open, export_published, export_root

BACKUP_MANIFEST = "backup.json"
# The manifest's signature: {"algorithm", "key_id", "hmac"} (see the module's docstring).
SIGNATURE = "backup.json.hmac"
SIGNATURE_ALGORITHM = "HMAC-SHA256"
# Where backups go in the object store, under the store's prefix.
STORE_FOLDER = "backups"
FORMAT = "mica-backup"
FORMAT_VERSION = 1
NAME_PREFIX = "mica-backup-"
EXPORTS = "exports"
DATABASE_FILES = {"sqlite": "database.sqlite3", "postgresql": "database.pgdump"}
ENGINE_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}
# Connection options libpq also reads from the environment, as the programs get them.
LIBPQ_ENVIRONMENT = {
    "sslmode": "PGSSLMODE",
    "sslrootcert": "PGSSLROOTCERT",
    "sslcert": "PGSSLCERT",
    "sslkey": "PGSSLKEY",
    "passfile": "PGPASSFILE",
    "service": "PGSERVICE",
    "connect_timeout": "PGCONNECT_TIMEOUT",
    "options": "PGOPTIONS",
    "target_session_attrs": "PGTARGETSESSIONATTRS",
}
# `pg_restore --list`: "215; 1259 16390 TABLE public auth_group owner"
DUMP_TABLE_RE = re.compile(r"^\d+; \d+ \d+ TABLE (\S+) (\S+) ", re.MULTILINE)
ERROR_TAIL = 2000


class BackupRefused(DomainError):
    """A backup or a restore refused, with the reason; a refused restore changed nothing."""


def _silent(percent, message=""):
    return None


def _database():
    return connections[DEFAULT_DB_ALIAS]


def _engine():
    vendor = _database().vendor
    if vendor not in DATABASE_FILES:
        raise BackupRefused(
            _("Backups support SQLite and PostgreSQL; the configured database is %(vendor)s.")
            % {"vendor": vendor}
        )
    if vendor == "sqlite" and _database().is_in_memory_db():
        raise BackupRefused(_("The configured SQLite database lives in memory, not in a file."))
    return vendor


def _reason(error):
    return getattr(error, "strerror", None) or str(error)


def _latest_migrations(rows):
    """{app: the migration applied last}, from (app, name) rows in the order applied."""
    latest = {}
    for app, name in rows:
        latest[app] = name
    return dict(sorted(latest.items()))


# --- The backup key and the manifest's signature ----------------------------------


def _inside(path, folder):
    path, folder = Path(path).absolute(), Path(folder).absolute()
    return folder == path or folder in path.parents


def _key_file_make(key_file):
    # Made 0600 from the start, as var/secret_key: whoever reads it can sign a backup.
    key_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # made by another backup meanwhile
    with os.fdopen(descriptor, "w") as stream:
        stream.write(secrets.token_urlsafe(48))


def _backup_key(*, destination=None):
    """The key that signs and checks manifests, as bytes. `destination`: a backup is about
    to be written there, and the embedded key file is made if missing."""
    if settings.BACKUP_KEY:
        return settings.BACKUP_KEY.encode()
    if settings.BACKUP_KEY_FILE is None:
        raise BackupRefused(
            _(
                "Set MICA_BACKUP_KEY: backups are signed with it, and a restore refuses a "
                "backup it did not sign."
            )
        )
    key_file = Path(settings.BACKUP_KEY_FILE)
    if destination is not None:
        if _inside(key_file, destination):
            raise BackupRefused(
                _(
                    "The backup key %(key)s lies under %(path)s, where the backups go: "
                    "keep it apart from them, or set MICA_BACKUP_KEY."
                )
                % {"key": key_file, "path": destination}
            )
        _key_file_make(key_file)
    try:
        key = key_file.read_text().strip()
    except FileNotFoundError:
        key = ""
    if not key:
        raise BackupRefused(
            _(
                "This machine has no backup key (neither MICA_BACKUP_KEY nor %(path)s): set "
                "MICA_BACKUP_KEY to the key of the deployment that made the backup."
            )
            % {"path": key_file}
        )
    return key.encode()


def _key_id(key):
    # Names the key without revealing it, so a refusal can say "another key".
    return hmac.new(key, b"mica-backup-key-id", hashlib.sha256).hexdigest()[:16]


def _signature(key, manifest_bytes):
    return {
        "algorithm": SIGNATURE_ALGORITHM,
        "key_id": _key_id(key),
        "hmac": hmac.new(key, manifest_bytes, hashlib.sha256).hexdigest(),
    }


def _signature_check(source, manifest_bytes, key):
    """Refused unless backup.json is exactly what the key signed."""
    try:
        signature = json.loads((source / SIGNATURE).read_text(encoding="utf-8"))
        algorithm, key_id, mac = signature["algorithm"], signature["key_id"], signature["hmac"]
        readable = all(isinstance(value, str) for value in (algorithm, key_id, mac))
    except (OSError, ValueError, KeyError, TypeError):
        readable = False
    if not readable or algorithm != SIGNATURE_ALGORITHM:
        raise BackupRefused(
            _(
                "%(path)s holds no readable signature of its manifest (%(signature)s): a backup "
                "that is not authenticated is refused."
            )
            % {"path": source, "signature": SIGNATURE}
        )
    if not hmac.compare_digest(key_id, _key_id(key)):
        raise BackupRefused(
            _(
                "This backup was signed with another backup key than this machine's: set "
                "MICA_BACKUP_KEY to the key of the deployment that made it."
            )
        )
    if not hmac.compare_digest(mac, _signature(key, manifest_bytes)["hmac"]):
        raise BackupRefused(
            _(
                "%(manifest)s does not match its signature: the backup was altered after it "
                "was written and is refused."
            )
            % {"manifest": BACKUP_MANIFEST}
        )


def _private_tree(folder):
    """Every file under `folder` its owner's only: a backup holds every secret."""
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)


# --- SQLite -------------------------------------------------------------------


def _sqlite_path():
    return Path(_database().settings_dict["NAME"])


def _sqlite_uri(path, mode):
    # mode=rw never creates a missing file; immutable=1 reads a backup even on read-only media.
    query = "mode=ro&immutable=1" if mode == "ro" else f"mode={mode}"
    return f"{Path(path).resolve().as_uri()}?{query}"


def _sqlite_quick_check(connection):
    (verdict,) = connection.execute("PRAGMA quick_check").fetchone()
    return verdict == "ok"


def _sqlite_copy(target):
    """Copy the live database file to `target`; return its migration state."""
    live = _sqlite_path()
    if not live.is_file():
        raise BackupRefused(_("There is no database at %(path)s to back up.") % {"path": live})
    try:
        with (
            closing(sqlite3.connect(_sqlite_uri(live, "rw"), uri=True, timeout=20)) as source,
            closing(sqlite3.connect(target)) as copy,
        ):
            # One step: the copy is the state of one read transaction, whatever the site writes.
            source.backup(copy)
            if not _sqlite_quick_check(copy):
                raise BackupRefused(_("The copy of the database failed its integrity check."))
            has_migrations = copy.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'django_migrations'"
            ).fetchone()
            rows = (
                copy.execute("SELECT app, name FROM django_migrations ORDER BY id").fetchall()
                if has_migrations
                else []
            )
    except sqlite3.Error as error:
        raise BackupRefused(
            _("The database could not be copied: %(error)s") % {"error": error}
        ) from error
    return _latest_migrations(rows)


def _sqlite_check(copy):
    try:
        with closing(sqlite3.connect(_sqlite_uri(copy, "ro"), uri=True)) as connection:
            sound = _sqlite_quick_check(connection)
    except sqlite3.Error:
        sound = False
    if not sound:
        raise BackupRefused(
            _("%(name)s in the backup is not a sound SQLite database.") % {"name": copy.name}
        )
    live = _sqlite_path()
    folder = live.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise BackupRefused(_("The database folder %(path)s cannot be written.") % {"path": folder})
    if live.exists() and not os.access(live, os.W_OK):
        raise BackupRefused(_("The database %(path)s cannot be written.") % {"path": live})


def _sqlite_restore(copy):
    try:
        with (
            closing(sqlite3.connect(_sqlite_uri(copy, "ro"), uri=True)) as source,
            closing(sqlite3.connect(_sqlite_path(), timeout=20)) as live,
        ):
            # The backup API writes the whole destination in one transaction.
            source.backup(live)
    except sqlite3.Error as error:
        raise BackupRefused(
            _("Restoring the database failed; it was left as it was: %(error)s") % {"error": error}
        ) from error


# --- PostgreSQL -------------------------------------------------------------------


def _pg_environment():
    """The connection parameters of the configured database, as libpq reads them.

    The password goes in PGPASSWORD, never on a command line that `ps` shows.
    """
    params = _database().settings_dict
    environment = dict(os.environ)
    for key, variable in (
        ("HOST", "PGHOST"),
        ("PORT", "PGPORT"),
        ("USER", "PGUSER"),
        ("PASSWORD", "PGPASSWORD"),
    ):
        if params.get(key):
            environment[variable] = str(params[key])
    for option, value in (params.get("OPTIONS") or {}).items():
        if option in LIBPQ_ENVIRONMENT and value is not None:
            environment[LIBPQ_ENVIRONMENT[option]] = str(value)
    return environment


def _pg_program(program):
    executable = shutil.which(program)
    if executable is None:
        raise BackupRefused(
            _(
                "%(program)s is not installed: install the PostgreSQL client programs "
                "of the server's major version."
            )
            % {"program": program}
        )
    return executable


def _pg_run(program, arguments, failure):
    """Run a PostgreSQL client program; `failure(its error output)` is the refusal."""
    result = subprocess.run(
        [_pg_program(program), *arguments],
        env=_pg_environment(),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        error = (result.stderr or result.stdout).strip()[-ERROR_TAIL:]
        raise BackupRefused(failure(error))
    return result.stdout


def _pg_migrations():
    recorder = MigrationRecorder(_database())
    if not recorder.has_table():
        return {}
    return _latest_migrations(recorder.migration_qs.order_by("id").values_list("app", "name"))


def _pg_dump_tables(dump):
    """The tables a custom-format dump holds; refused when it is not one pg_restore reads."""
    listing = _pg_run(
        "pg_restore",
        ["--list", str(dump)],
        lambda error: (
            _("%(name)s in the backup is not a dump pg_restore can read: %(error)s")
            % {"name": dump.name, "error": error}
        ),
    )
    return {name for _schema, name in DUMP_TABLE_RE.findall(listing)}


def _pg_copy(target):
    """Dump the configured database to `target`; return its migration state."""
    migrations = _pg_migrations()
    _pg_run(
        "pg_dump",
        [
            "--format=custom",
            "--no-password",
            f"--file={target}",
            f"--dbname={_database().settings_dict['NAME']}",
        ],
        lambda error: _("pg_dump failed; no backup was written: %(error)s") % {"error": error},
    )
    _pg_dump_tables(target)
    return migrations


def _pg_restore(dump, dump_tables):
    """Replace the configured database with the dump, in one transaction; return the
    tables dropped because the dump lacks them.

    pg_restore --clean --if-exists --no-owner writes the restore as SQL and psql runs
    it inside one transaction that first drops the tables the dump lacks (made by a
    migration after the backup): left in place they would survive --clean, keep
    foreign keys that stop it, and make the next `migrate` fail. The transaction
    commits only when pg_restore has read the whole dump and psql has met no error;
    otherwise the database is left as it was.
    """
    connection = _database()
    leftovers = sorted(set(connection.introspection.table_names()) - dump_tables)
    connections.close_all()
    restore_program, psql_program = _pg_program("pg_restore"), _pg_program("psql")
    environment = _pg_environment()
    with tempfile.TemporaryFile() as restore_errors, tempfile.TemporaryFile() as psql_errors:
        psql = subprocess.Popen(
            [
                psql_program,
                "--no-password",
                "--no-psqlrc",
                "--quiet",
                "--set=ON_ERROR_STOP=1",
                f"--dbname={connection.settings_dict['NAME']}",
                "--file=-",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=psql_errors,
            env=environment,
        )
        restore = subprocess.Popen(
            [restore_program, "--clean", "--if-exists", "--no-owner", "--file=-", str(dump)],
            stdout=subprocess.PIPE,
            stderr=restore_errors,
            env=environment,
        )
        try:
            psql.stdin.write(b"BEGIN;\n")
            for table in leftovers:
                name = connection.ops.quote_name(table)
                psql.stdin.write(f"DROP TABLE IF EXISTS {name} CASCADE;\n".encode())
            shutil.copyfileobj(restore.stdout, psql.stdin, 1 << 20)
            if restore.wait() == 0:
                psql.stdin.write(b"COMMIT;\n")
            psql.stdin.close()
        except BrokenPipeError:
            pass  # psql stopped at an error; its transaction is rolled back
        finally:
            restore.stdout.close()  # pg_restore stops too if psql stopped reading
            restore.wait()
            try:
                psql.stdin.close()
            except BrokenPipeError:
                pass
            psql.wait()
        # psql's error first: when psql stops, pg_restore fails only for want of a reader.
        failures = [
            errors
            for process, errors in ((psql, psql_errors), (restore, restore_errors))
            if process.returncode != 0
        ]
        if failures:
            failures[0].seek(0)
            error = failures[0].read().decode(errors="replace").strip()[-ERROR_TAIL:]
            raise BackupRefused(
                _("pg_restore failed; the database was left as it was: %(error)s")
                % {"error": error}
            )
    return leftovers


# --- The export set -------------------------------------------------------------


def _exports_copy(target):
    """Copy the published set to `target`; None when nothing has been published yet."""
    published = export_published()
    if published is None:
        return None
    manifest = published.summary
    target.mkdir()
    try:
        for name, sha256 in published.files.items():
            with export_file_open(name) as source, open(target / name, "wb") as copy:
                shutil.copyfileobj(source, copy, 1 << 20)
            if file_digest(target / name) != sha256:
                raise BackupRefused(
                    _("%(name)s in the published export set does not match its checksum.")
                    % {"name": name}
                )
    except FileNotFoundError as error:
        raise BackupRefused(
            _("The published export set was replaced while it was copied; run the backup again.")
        ) from error
    return {
        "directory": EXPORTS,
        "edition": manifest["edition"].get("slug"),
        "generated_at": manifest.get("generated_at"),
        "inputs_sha256": manifest.get("inputs_sha256"),
    }


def _exports_names(source, manifest):
    """The file names of the backed-up export set, its manifest last; [] when there is none."""
    if manifest["exports"] is None:
        return []
    folder = PurePosixPath(manifest["exports"]["directory"])
    listed = {entry["name"] for entry in manifest["files"]}
    try:
        exported = json.loads((source / folder / EXPORT_MANIFEST).read_text(encoding="utf-8"))
        names = [entry["name"] for entry in exported["files"]] + [EXPORT_MANIFEST]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BackupRefused(_("The export set in the backup has no readable manifest.")) from error
    for name in names:
        if PurePosixPath(name).name != name or str(folder / name) not in listed:
            raise BackupRefused(
                _("The export set in the backup is incomplete: %(name)s is missing.")
                % {"name": name}
            )
    return [folder / name for name in names]


def _nearest_existing(path):
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _exports_stage(source, names):
    """Copy the backed-up set beside the published one, unpublished; None when there is none."""
    if not names:
        return None
    builds = export_root() / "builds"
    build = None
    try:
        builds.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="restore-", dir=builds))
        build.chmod(0o755)  # mkdtemp makes it private; the web server reads it
        for name in names:  # the manifest last: a build is complete only with it
            shutil.copyfile(source / name, build / name.name)
    except OSError as error:
        if build is not None:
            shutil.rmtree(build, ignore_errors=True)
        raise BackupRefused(
            _("The export set could not be written under %(path)s; nothing was changed: %(error)s")
            % {"path": builds, "error": _reason(error)}
        ) from error
    return build


# --- Backup ---------------------------------------------------------------------


def _backup_folder(destination, taken_at):
    stamp = taken_at.strftime("%Y%m%dT%H%M%SZ")
    candidate, number = destination / f"{NAME_PREFIX}{stamp}", 1
    while candidate.exists():
        number += 1
        candidate = destination / f"{NAME_PREFIX}{stamp}-{number}"
    return candidate


def backup_write(*, destination=None, progress=_silent):
    """Write a backup directory under `destination` (VAR_DIR/backups); return (path, manifest).

    With MICA_S3_BUCKET set and no `destination`, the backup goes to the object store
    instead: (its name there, backups/<name>, manifest)."""
    if destination or not settings.S3_BUCKET:
        final, manifest = _backup_local(destination, progress)
        progress(100, _("Backup written to %(path)s") % {"path": final})
        return final, manifest
    final, manifest = _backup_local(None, progress)
    try:
        progress(90, _("Sending the backup to the object store"))
        name = _store_put(final)
    finally:
        shutil.rmtree(final, ignore_errors=True)  # the store holds it; a copy here dies here
    progress(100, _("Backup written to %(path)s") % {"path": name})
    return name, manifest


def _store_put(final):
    """Send a finished backup directory to the object store, its manifest and signature last:
    a backup there is complete once its signature is."""
    store = build_store()
    files = sorted(path for path in final.rglob("*") if path.is_file())
    last = [final / BACKUP_MANIFEST, final / SIGNATURE]
    try:
        for path in [path for path in files if path not in last] + last:
            with open(path, "rb") as stream:
                store.save(_store_name(final.name, path.relative_to(final).as_posix()), stream)
    except Exception as error:  # the store's client raises its own errors
        raise BackupRefused(
            _("The backup could not be sent to the object store: %(error)s")
            % {"error": f"{type(error).__name__}: {error}"[:ERROR_TAIL]}
        ) from error
    return f"{STORE_FOLDER}/{final.name}"


def _store_name(name, relative):
    return f"{STORE_FOLDER}/{name}/{relative}"


def _backup_local(destination, progress):
    engine = _engine()
    destination = Path(destination) if destination else Path(settings.VAR_DIR) / "backups"
    if destination.exists() and not destination.is_dir():
        raise BackupRefused(_("%(path)s is not a directory.") % {"path": destination})
    key = _backup_key(destination=destination)
    taken_at = timezone.now()
    try:
        destination.mkdir(parents=True, exist_ok=True)
        # mkdtemp makes the folder readable by its owner only: the backup holds every secret.
        partial = Path(
            tempfile.mkdtemp(prefix=f".{NAME_PREFIX}", suffix=".partial", dir=destination)
        )
    except OSError as error:
        raise BackupRefused(
            _("A backup cannot be written under %(path)s: %(error)s")
            % {"path": destination, "error": _reason(error)}
        ) from error
    try:
        database_file = partial / DATABASE_FILES[engine]
        progress(0, _("Copying the %(engine)s database") % {"engine": ENGINE_NAMES[engine]})
        migrations = _sqlite_copy(database_file) if engine == "sqlite" else _pg_copy(database_file)
        progress(60, _("Copying the published export set"))
        exports = _exports_copy(partial / EXPORTS)
        if exports is None:
            progress(80, _("No export set has been published yet; the backup holds none"))
        progress(85, _("Computing checksums"))
        files = [
            {
                "name": path.relative_to(partial).as_posix(),
                "size": path.stat().st_size,
                "sha256": file_digest(path),
            }
            for path in sorted(partial.rglob("*"))
            if path.is_file()
        ]
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "created_at": taken_at.isoformat(),
            "engine": engine,
            "database_file": database_file.name,
            "django": django.get_version(),
            "migrations": migrations,
            "exports": exports,
            "files": files,
        }
        manifest_bytes = (json.dumps(manifest, ensure_ascii=False, indent=1) + "\n").encode()
        (partial / BACKUP_MANIFEST).write_bytes(manifest_bytes)
        (partial / SIGNATURE).write_text(json.dumps(_signature(key, manifest_bytes)) + "\n")
        _private_tree(partial)
        final = _backup_folder(destination, taken_at)
        partial.rename(final)
    except OSError as error:
        shutil.rmtree(partial, ignore_errors=True)
        raise BackupRefused(
            _("The backup could not be written under %(path)s: %(error)s")
            % {"path": destination, "error": _reason(error)}
        ) from error
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return final, manifest


# --- Restore --------------------------------------------------------------------


def _manifest_read(source, key):
    if not source.exists():
        raise BackupRefused(_("There is no backup at %(path)s.") % {"path": source})
    if not source.is_dir():
        raise BackupRefused(
            _("%(path)s is not a backup: a backup is a directory holding %(manifest)s.")
            % {"path": source, "manifest": BACKUP_MANIFEST}
        )
    try:
        names = os.listdir(source)
    except OSError as error:
        raise BackupRefused(
            _("%(path)s cannot be read: %(error)s") % {"path": source, "error": _reason(error)}
        ) from error
    if BACKUP_MANIFEST not in names:
        raise BackupRefused(
            _("%(path)s is not a backup: it holds no %(manifest)s.")
            % {"path": source, "manifest": BACKUP_MANIFEST}
        )
    try:
        manifest_bytes = (source / BACKUP_MANIFEST).read_bytes()
    except OSError as error:
        raise BackupRefused(
            _("%(path)s cannot be read: %(error)s")
            % {"path": source / BACKUP_MANIFEST, "error": _reason(error)}
        ) from error
    # Before anything the manifest says is believed.
    _signature_check(source, manifest_bytes, key)
    try:
        manifest = json.loads(manifest_bytes.decode("utf-8"))
    except ValueError as error:
        raise BackupRefused(
            _("%(path)s is not a backup manifest.") % {"path": source / BACKUP_MANIFEST}
        ) from error
    if not _manifest_well_formed(manifest):
        raise BackupRefused(
            _("%(path)s is not a backup manifest this release reads.")
            % {"path": source / BACKUP_MANIFEST}
        )
    return manifest


def _manifest_well_formed(manifest):
    try:
        names = [entry["name"] for entry in manifest["files"]]
        return (
            manifest["format"] == FORMAT
            and manifest["format_version"] == FORMAT_VERSION
            and manifest["engine"] in DATABASE_FILES
            and manifest["database_file"] in names
            and isinstance(manifest["migrations"], dict)
            and (manifest["exports"] is None or isinstance(manifest["exports"]["directory"], str))
            and all(
                isinstance(entry["size"], int) and isinstance(entry["sha256"], str)
                for entry in manifest["files"]
            )
            # Names stay inside the backup: no absolute paths, no way up.
            and all(
                isinstance(name, str)
                and not PurePosixPath(name).is_absolute()
                and ".." not in PurePosixPath(name).parts
                for name in names
            )
        )
    except (KeyError, TypeError, AttributeError):
        return False


def _files_check(source, manifest, progress):
    progress(5, _("Checking the checksums of %(count)d files") % {"count": len(manifest["files"])})
    for entry in manifest["files"]:
        path = source / entry["name"]
        try:
            matches = path.stat().st_size == entry["size"] and file_digest(path) == entry["sha256"]
        except FileNotFoundError:
            raise BackupRefused(
                _("%(name)s is missing from the backup.") % {"name": entry["name"]}
            ) from None
        except OSError as error:
            raise BackupRefused(
                _("%(name)s in the backup cannot be read: %(error)s")
                % {"name": entry["name"], "error": _reason(error)}
            ) from error
        if not matches:
            raise BackupRefused(
                _("%(name)s does not match its checksum in %(manifest)s: the backup is damaged.")
                % {"name": entry["name"], "manifest": BACKUP_MANIFEST}
            )


def _migrations_check(migrations):
    known = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    unknown = sorted(
        f"{app}.{name}" for app, name in migrations.items() if (app, name) not in known
    )
    if unknown:
        raise BackupRefused(
            _(
                "This backup was made by a release with migrations this one lacks (%(names)s): "
                "restore it with that release."
            )
            % {"names": ", ".join(unknown)}
        )


def _exports_writable_check():
    root = export_root()
    existing = _nearest_existing(root / "builds")
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise BackupRefused(_("The export folder %(path)s cannot be written.") % {"path": root})


def backup_check(*, source, progress=_silent):
    """(manifest, what the restore needs) of the backup at `source` once every check
    has passed; BackupRefused with the reason otherwise. Changes nothing."""
    engine = _engine()
    key = _backup_key()
    source = Path(source)
    progress(0, _("Reading %(path)s") % {"path": source / BACKUP_MANIFEST})
    manifest = _manifest_read(source, key)
    if manifest["engine"] != engine:
        raise BackupRefused(
            _(
                "This backup holds a %(backup)s database and the configured database is "
                "%(configured)s: restore it into a %(backup)s deployment."
            )
            % {"backup": ENGINE_NAMES[manifest["engine"]], "configured": ENGINE_NAMES[engine]}
        )
    _files_check(source, manifest, progress)
    _migrations_check(manifest["migrations"])
    database_file = source / manifest["database_file"]
    progress(25, _("Checking the database copy"))
    dump_tables = None
    if engine == "sqlite":
        _sqlite_check(database_file)
    else:
        _pg_program("psql")
        dump_tables = _pg_dump_tables(database_file)
    export_names = _exports_names(source, manifest)
    if export_names:
        _exports_writable_check()
    return manifest, {"dump_tables": dump_tables, "export_names": export_names}


def backup_restore(*, source, progress=_silent, confirm=lambda manifest: True):
    """Bring back the database and the export set of the backup at `source`.

    Every check runs first and then `confirm(manifest)`; a refusal or a False
    leaves everything as it was. Returns a report: the manifest, whether an export
    set was published, the tables dropped and the migrations still to apply.
    """
    if _from_store(source):
        with _store_fetched(source, progress) as fetched:
            return _restore(fetched, progress, confirm)
    return _restore(Path(source), progress, confirm)


def _from_store(source):
    """Whether `source` names a backup in the object store: a bare name there, no path here."""
    if not settings.S3_BUCKET or Path(source).exists():
        return False
    name = str(source).removeprefix(f"{STORE_FOLDER}/")
    return name.startswith(NAME_PREFIX) and "/" not in name


@contextmanager
def _store_fetched(source, progress):
    """The backup `source` fetched from the object store into a private temporary folder,
    its signature checked before any other file is fetched; removed afterwards."""
    name = str(source).removeprefix(f"{STORE_FOLDER}/")
    store = build_store()
    folder = Path(tempfile.mkdtemp(prefix=".restore-", dir=settings.VAR_DIR))
    try:
        progress(0, _("Fetching %(name)s from the object store") % {"name": name})
        try:
            if not store.exists(_store_name(name, SIGNATURE)):
                raise BackupRefused(
                    _("There is no backup named %(name)s in the object store.") % {"name": name}
                )
            for relative in (BACKUP_MANIFEST, SIGNATURE):
                _store_fetch(store, name, relative, folder)
            manifest = _manifest_read(folder, _backup_key())
            for entry in manifest["files"]:
                if store.exists(_store_name(name, entry["name"])):
                    _store_fetch(store, name, entry["name"], folder)
        except BackupRefused:
            raise
        except Exception as error:  # the store's client raises its own errors
            raise BackupRefused(
                _("The backup could not be fetched from the object store: %(error)s")
                % {"error": f"{type(error).__name__}: {error}"[:ERROR_TAIL]}
            ) from error
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _store_fetch(store, name, relative, folder):
    target = folder / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with store.open(_store_name(name, relative), "rb") as stream, open(target, "wb") as copy:
        shutil.copyfileobj(stream, copy, 1 << 20)


def _restore(source, progress, confirm):
    manifest, details = backup_check(source=source, progress=progress)
    if not confirm(manifest):
        raise BackupRefused(_("Restore cancelled; nothing was changed."))
    engine = manifest["engine"]
    progress(30, _("Staging the export set"))
    build = _exports_stage(source, details["export_names"])
    dropped = []
    try:
        progress(40, _("Restoring the %(engine)s database") % {"engine": ENGINE_NAMES[engine]})
        connections.close_all()
        database_file = source / manifest["database_file"]
        if engine == "sqlite":
            _sqlite_restore(database_file)
        else:
            dropped = _pg_restore(database_file, details["dump_tables"])
    except BaseException:
        if build is not None:
            shutil.rmtree(build, ignore_errors=True)
        raise
    if build is not None:
        progress(85, _("Publishing the export set"))
        exports_publish_restored(build)
    else:
        progress(85, _("The backup holds no export set; the published set was left as it was"))
    progress(95, _("Moving the content revision"))
    revisions_bump_all()
    executor = MigrationExecutor(_database())
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    progress(100, _("Restored the backup of %(time)s") % {"time": manifest["created_at"]})
    return {
        "manifest": manifest,
        "exports_published": build is not None,
        "dropped_tables": dropped,
        "pending_migrations": [str(migration) for migration, _backwards in pending],
    }
