import hashlib
import json
from pathlib import Path

import pytest


@pytest.fixture
def export_dir(settings, tmp_path):
    settings.EXPORT_DIR = tmp_path / "exports"
    return settings.EXPORT_DIR


def published(export_dir):
    """{name: bytes} of the published set, manifest included; {} before the first one."""
    current = Path(export_dir) / "current"
    if not current.exists():
        return {}
    return {path.name: path.read_bytes() for path in current.resolve().iterdir()}


def assert_intact(files):
    """Every file of a published set matches the size and checksum its manifest gives."""
    manifest = json.loads(files["manifest.json"])
    for entry in manifest["files"]:
        body = files[entry["name"]]
        assert len(body) == entry["size"], entry["name"]
        assert hashlib.sha256(body).hexdigest() == entry["sha256"], entry["name"]
    return manifest
