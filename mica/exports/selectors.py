"""The published export set, as readers see it: resolved once, never half-switched."""

import json
from pathlib import Path

from django.conf import settings

from mica.exports.registry import MANIFEST


def export_current():
    """(directory, manifest) of the published set, or (None, None) before the first one."""
    link = Path(settings.EXPORT_DIR) / "current"
    try:
        directory = link.resolve(strict=True)
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    return directory, manifest


def export_file_get(manifest, name):
    """The manifest entry of a published file; None for any name the set does not list."""
    return next((f for f in manifest["files"] if f["name"] == name), None)
