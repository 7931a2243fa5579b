"""Build the export set in a fresh directory, validate it, then publish it in one step.

Validated: every file against its schema, the corrections against the record, the holdout
scan, and every figure recomputed from the files by mica_verify, the verifier readers run.

Written under settings.EXPORT_DIR, as mica.published_dirs lays it out (a build is
complete with its manifest.json), then published through mica.content.builds: the files stored
in the build store and the pointer moved in the database. A build that fails any check
is deleted and the published set is left exactly as it was.
"""

import hashlib
import json
import logging
import os
import shutil

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.gate import gate_recompute_all
from governance.selectors import cells_stale_exist, correction_log
from mica.content.builds import (
    build_follow,
    build_made_with,
    build_publish,
    file_digest,
    local_name,
    revisions_document,
    tables_moved,
)
from mica.content.models import PublicationKind
from mica.content.publication_log import publication_log_append, publication_log_ready
from mica.content.reads import tables_recorded
from mica.content.revision import GLOBAL, NO_REVISION, revision_pending, revisions_read
from mica.exports import documents
from mica.exports.holdout import holdout_needles, holdout_scan
from mica.exports.registry import (
    CORRECTIONS_JSON,
    EXPORT_FILES,
    MANIFEST,
    BuildContext,
    site_url,
)
from mica.exports.selectors import EXPORT_KIND, export_published, export_root
from mica.exports.validation import ExportRefused, SchemaCheck
from mica.methodology.selectors import edition_current
from mica.published_dirs import build_dir_new, builds_prune, dir_current
from mica.signing import sign
from mica.text import lazy_format

try:
    from mica_verify.recompute import figures_verify
except ImportError as error:
    # Uninstalled, the checkout's mica_verify/ folder still imports as an empty namespace
    # package from the project's directory: say what to do instead of failing obscurely.
    raise ImproperlyConfigured(
        "mica_verify is not installed: every export set is checked with it before it is "
        "published. Install it with `.venv/bin/pip install --no-deps ./mica_verify` (the "
        "manual, Deployers)."
    ) from error

logger = logging.getLogger(__name__)

KEEP_BUILDS = 3
# How many differing figures a refusal names: the job's message holds 500 characters, and
# the log holds every one.
NAMED_MISMATCHES = 3
# The detached signature of manifest.json's exact bytes (Ed25519, base64), served beside it.
# The manifest cannot list it (the signature covers the manifest), so it is a file of the
# set's build but of no manifest entry.
MANIFEST_SIGNATURE = f"{MANIFEST}.sig"


def _previous_files(root, made_with, revisions):
    """(directory, {name: (manifest entry, tables)}) of the published set's files that are
    still what writing them would give: made with the same code, settings, address and
    edition, and none of their tables moved since. (None, {}) when none are."""
    published = export_published()
    if published is None or published.reads.get("made_with") != made_with:
        return None, {}
    try:
        build_follow(EXPORT_KIND, root, MANIFEST)
    except (OSError, DatabaseError):
        logger.exception("the published export set could not be fetched; every file is written")
    if local_name(root) != published.name:
        return None, {}
    moved = tables_moved(published.reads["revisions"], revisions)
    entries = {entry["name"]: entry for entry in published.summary["files"]}
    kept = {
        name: (entries[name], tables)
        for name, tables in published.reads["files"].items()
        if moved.isdisjoint(tables)
    }
    return dir_current(root), kept


def _published_current(root, made_with, revisions):
    """Whether the published set, as this node holds it, was made the same way from the
    same revisions: then a new set would be the same files, and a restart with nothing to
    do leaves it as it is."""
    published = export_published()
    return (
        published is not None
        and published.reads.get("made_with") == made_with
        and published.reads.get("revisions") == revisions
        and local_name(root) == published.name
    )


def _kept(build, context, previous, export):
    """Link `export` from the previous set if it may be; the tables it read, or None."""
    directory, kept = previous
    if export.name not in kept:
        return None
    entry, tables = kept[export.name]
    try:
        os.link(directory / export.name, build / export.name)
    except OSError:  # pruned meanwhile: write it
        return None
    context.written[export.name] = entry
    return tables


def _write_files(build, context, progress, previous):
    """Write every file, or link it from the previous set (`previous`, _previous_files);
    return the tables each file read."""
    reads = {}
    for index, export in enumerate(EXPORT_FILES):
        tables = _kept(build, context, previous, export)
        if tables is not None:
            reads[export.name] = tables
            continue
        writing = lazy_format(_("Writing %(name)s"), name=export.name)
        progress(5 + 75 * index // len(EXPORT_FILES), writing)
        path = build / export.name
        # A file that describes earlier ones (the Croissant document, their checksums)
        # reads the tables they were written from itself, so its own reads cover them.
        with tables_recorded() as recorder, open(path, "w", encoding="utf-8", newline="") as stream:
            export.write(stream, context)
        reads[export.name] = sorted(recorder.watched())
        context.written[export.name] = {
            "name": export.name,
            "size": path.stat().st_size,
            "sha256": file_digest(path),
            "media_type": export.media_type,
            "title": documents.bilingual(export.title),
        }
    return reads


def _check_corrections_parity(build):
    """The corrections file lists exactly the corrections on record, none more, none less,
    and the feed has an entry of each (two corrections of one claim are two entries)."""
    written = json.loads((build / CORRECTIONS_JSON).read_text(encoding="utf-8"))
    on_record = {c.pk: (c.edition.slug, c.section_id) for c in correction_log()}
    exported = {c["id"]: (c["edition"], c["section_id"]) for c in written["corrections"]}
    if on_record != exported:
        raise ExportRefused(_("The corrections export does not match the corrections on record."))
    atom_text = (build / "mica-corrections.atom").read_text(encoding="utf-8")
    for pk, (_edition, section_id) in on_record.items():
        if f"/{section_id}/#correction-{pk}</id>" not in atom_text:
            raise ExportRefused(
                lazy_format(_("The Atom feed lacks the correction of %(id)s."), id=section_id)
            )


def _validate(build, checks):
    for export in EXPORT_FILES:
        if export.schema:
            document = json.loads((build / export.name).read_text(encoding="utf-8"))
            checks.document(export.schema, document, export.name)
    checks.raise_if_invalid()
    _check_corrections_parity(build)
    leaks = holdout_scan([build / e.name for e in EXPORT_FILES], holdout_needles())
    if leaks:
        # The builder leaves holdout tasks out by construction; reaching this means a
        # record carries holdout text into a public one. Name it, so it can be fixed.
        raise ExportRefused(
            lazy_format(
                _("Holdout content of %(records)s found in %(files)s; nothing was published."),
                records=", ".join(sorted({record for _name, record in leaks})),
                files=", ".join(sorted({name for name, _record in leaks})),
            )
        )


def _differing(mismatches):
    """The names of the first figures that differ, and how many more there are."""
    names = ", ".join(mismatch["name"] for mismatch in mismatches[:NAMED_MISMATCHES])
    more = len(mismatches) - NAMED_MISMATCHES
    if more <= 0:
        return names
    return lazy_format(_("%(names)s and %(count)d more"), names=names, count=more)


def _figures_report(build):
    try:
        return figures_verify(build)
    except Exception as error:
        # A set the verifier cannot read is a set nobody could check: not published.
        raise ExportRefused(
            lazy_format(
                _("mica_verify could not check the new export set: %(error)s"),
                error=f"{type(error).__name__}: {error}",
            )
        ) from error


def _verify(build, progress):
    """Recompute the new set's figures with mica_verify, from its files alone, as a reader
    will once it is published, and refuse the set if any differs. The verifier's formulas
    are written apart from the portal's, so a figure computed wrongly here is caught
    before anyone downloads it. The log and the signature are not checked: the entry they
    need is appended with the publication itself."""
    progress(88, _("Recomputing the figures with mica_verify"))
    report = _figures_report(build)
    for mismatch in report.mismatches:
        logger.error("mica_verify: %(area)s: %(name)s: %(detail)s", mismatch)
    if report.mismatches:
        raise ExportRefused(
            lazy_format(
                _(
                    "The new export set does not verify: mica_verify recomputes %(figures)s "
                    "differently from what the set says; nothing was published."
                ),
                figures=_differing(report.mismatches),
            )
        )
    checks = sum(report.checked.values())
    progress(
        90, lazy_format(_("mica_verify passed all %(count)d checks of the figures"), count=checks)
    )


def _manifest(context, job_run_id):
    files = [context.written[e.name] for e in EXPORT_FILES]
    # The files are a pure function of the records, so their digests fingerprint the inputs.
    inputs = hashlib.sha256("".join(f"{f['name']}:{f['sha256']}\n" for f in files).encode())
    return {
        "edition": documents.edition_document(context.edition),
        "generated_at": timezone.now().isoformat(),
        "job_run": job_run_id,
        "inputs_sha256": inputs.hexdigest(),
        "files": files,
    }


def _manifest_sign(build):
    signature = sign((build / MANIFEST).read_bytes())
    (build / MANIFEST_SIGNATURE).write_text(signature + "\n", encoding="ascii")


def _logged(manifest, files):
    """What appends the set's entry to the publication log, once its pointer moves."""

    def log(published):
        subject = {
            "build": published.name,
            "build_id": published.pk,
            "edition": manifest["edition"].get("slug"),
            "manifest_sha256": files[MANIFEST],
        }
        publication_log_append(kind=PublicationKind.EXPORTS, subject=subject)

    return log


def _publish(root, build, manifest, revision, *, reads=None, force=False, logged=True):
    _manifest_sign(build)
    files = {entry["name"]: entry["sha256"] for entry in manifest["files"]}
    files[MANIFEST] = file_digest(build / MANIFEST)
    files[MANIFEST_SIGNATURE] = file_digest(build / MANIFEST_SIGNATURE)
    published = build_publish(
        kind=EXPORT_KIND,
        root=root,
        directory=build,
        files=files,
        revision=revision,
        summary=manifest,
        reads=reads,
        force=force,
        published_with=_logged(manifest, files) if logged else None,
    )
    if published is None:
        # A set made from newer content was published meanwhile: it stays.
        shutil.rmtree(build, ignore_errors=True)


def exports_publish_restored(build):
    """Publish a backup's export set, staged in `build` under the export root: older
    content brought back on purpose, so it replaces whatever is published."""
    manifest = json.loads((build / MANIFEST).read_text(encoding="utf-8"))
    revision = revisions_read().get(GLOBAL, NO_REVISION)[0]
    # A backup of a release before the publication log restores a database without it
    # (until `migrate`): the set is published all the same, unlogged.
    logged = publication_log_ready()
    if not logged:
        logger.warning("the restored database has no publication log: the set is not logged")
    _publish(export_root(), build, manifest, revision, force=True, logged=logged)


def exports_build_and_publish(
    *, job_run_id=None, full=False, progress=lambda percent, message="": None
):
    """Write, check and publish the export set of the current edition; return its manifest.

    Files of the published set whose tables have not moved since are linked, not written
    again, unless `full`; every file is checked either way."""
    edition = edition_current()
    if edition is None:
        raise ExportRefused(_("There is no published edition to export."))
    # Exports are made from fresh cells only: any computed under other inputs first.
    if cells_stale_exist():
        progress(1, _("Recomputing the gate cells the last change left stale"))
        gate_recompute_all()
    read = revisions_read()
    revisions = revisions_document(read)
    made_with = build_made_with(edition=edition.slug)
    root = export_root()
    # A transaction holding changes the revisions do not count yet cannot tell what moved.
    reuse = not full and not revision_pending()
    previous = _previous_files(root, made_with, revisions) if reuse else (None, {})
    if reuse and _published_current(root, made_with, revisions):
        progress(100, _("Nothing changed since the published export set"))
        kept = json.loads((dir_current(root) / MANIFEST).read_text(encoding="utf-8"))
        return {**kept, "unchanged": True}
    build = build_dir_new(root, job_run_id or "inline")
    checks = SchemaCheck()
    context = BuildContext(edition, site_url(), {}, checks.row)
    try:
        files_read = _write_files(build, context, progress, previous)
        progress(85, _("Checking schemas, corrections and the holdout"))
        _validate(build, checks)
        manifest = _manifest(context, job_run_id)
        checks.document("manifest.schema.json", manifest, MANIFEST)
        checks.raise_if_invalid()
        with open(build / MANIFEST, "w", encoding="utf-8") as stream:
            json.dump(manifest, stream, ensure_ascii=False, indent=1)
        _verify(build, progress)
        progress(92, _("Storing the export set"))
        reads = {"made_with": made_with, "revisions": revisions, "files": files_read}
        _publish(root, build, manifest, read.get(GLOBAL, NO_REVISION)[0], reads=reads)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    builds_prune(root, marker=MANIFEST, keep=KEEP_BUILDS)
    progress(100, _("Published"))
    return manifest
