"""The published export set, as readers see it: resolved once, never half-switched."""

import json
from pathlib import Path

from django.conf import settings

from mica.exports.registry import MANIFEST


def _current_directory():
    return (Path(settings.EXPORT_DIR) / "current").resolve(strict=True)


def export_current():
    """(directory, manifest) of the published set, or (None, None) before the first one."""
    try:
        directory = _current_directory()
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    return directory, manifest


def export_file_get(manifest, name):
    """The manifest entry of a published file; None for any name the set does not list."""
    return next((f for f in manifest["files"] if f["name"] == name), None)


def export_page_variant(request):
    """(which set, when it was published) for the page cache: the downloads page shows
    the published set, which a job replaces some time after the content changed."""
    try:
        directory = _current_directory()
        return str(directory), directory.stat().st_mtime
    except OSError:
        return "", None
