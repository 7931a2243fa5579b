"""Build the export set in a fresh directory, validate it, then publish it in one step.

Written under settings.EXPORT_DIR, as mica.published_dirs lays it out (a build is
complete with its manifest.json), then published through mica.content.builds: the files stored
in the build store and the pointer moved in the database. A build that fails any check
is deleted and the published set is left exactly as it was.
"""

import hashlib
import json
import shutil

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from governance.gate import gate_recompute_all
from governance.selectors import cells_stale_exist, correction_log
from mica.content.builds import build_publish, file_digest
from mica.content.revision import GLOBAL, NO_REVISION, revisions_read
from mica.exports import documents
from mica.exports.holdout import holdout_needles, holdout_scan
from mica.exports.registry import (
    CORRECTIONS_JSON,
    EXPORT_FILES,
    MANIFEST,
    BuildContext,
    site_url,
)
from mica.exports.selectors import EXPORT_KIND, export_root
from mica.exports.validation import ExportRefused, SchemaCheck
from mica.methodology.selectors import edition_current
from mica.published_dirs import build_dir_new, builds_prune
from mica.text import lazy_format

KEEP_BUILDS = 3


def _write_files(build, context, progress):
    for index, export in enumerate(EXPORT_FILES):
        writing = lazy_format(_("Writing %(name)s"), name=export.name)
        progress(5 + 75 * index // len(EXPORT_FILES), writing)
        path = build / export.name
        with open(path, "w", encoding="utf-8", newline="") as stream:
            export.write(stream, context)
        context.written[export.name] = {
            "name": export.name,
            "size": path.stat().st_size,
            "sha256": file_digest(path),
            "media_type": export.media_type,
            "title": documents.bilingual(export.title),
        }


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


def _publish(root, build, manifest, revision, *, force=False):
    files = {entry["name"]: entry["sha256"] for entry in manifest["files"]}
    files[MANIFEST] = file_digest(build / MANIFEST)
    published = build_publish(
        kind=EXPORT_KIND,
        root=root,
        directory=build,
        files=files,
        revision=revision,
        summary=manifest,
        force=force,
    )
    if published is None:
        # A set made from newer content was published meanwhile: it stays.
        shutil.rmtree(build, ignore_errors=True)


def exports_publish_restored(build):
    """Publish a backup's export set, staged in `build` under the export root: older
    content brought back on purpose, so it replaces whatever is published."""
    manifest = json.loads((build / MANIFEST).read_text(encoding="utf-8"))
    revision = revisions_read().get(GLOBAL, NO_REVISION)[0]
    _publish(export_root(), build, manifest, revision, force=True)


def exports_build_and_publish(*, job_run_id=None, progress=lambda percent, message="": None):
    """Write, check and publish the export set of the current edition; return its manifest."""
    edition = edition_current()
    if edition is None:
        raise ExportRefused(_("There is no published edition to export."))
    # Exports are made from fresh cells only: any computed under other inputs first.
    if cells_stale_exist():
        progress(1, _("Recomputing the gate cells the last change left stale"))
        gate_recompute_all()
    revision = revisions_read().get(GLOBAL, NO_REVISION)[0]
    root = export_root()
    build = build_dir_new(root, job_run_id or "inline")
    checks = SchemaCheck()
    context = BuildContext(edition, site_url(), {}, checks.row)
    try:
        _write_files(build, context, progress)
        progress(85, _("Checking schemas, corrections and the holdout"))
        _validate(build, checks)
        manifest = _manifest(context, job_run_id)
        checks.document("manifest.schema.json", manifest, MANIFEST)
        checks.raise_if_invalid()
        with open(build / MANIFEST, "w", encoding="utf-8") as stream:
            json.dump(manifest, stream, ensure_ascii=False, indent=1)
        progress(92, _("Storing the export set"))
        _publish(root, build, manifest, revision)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    builds_prune(root, marker=MANIFEST, keep=KEEP_BUILDS)
    progress(100, _("Published"))
    return manifest
