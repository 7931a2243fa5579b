"""Loads the methodology's canonical records from content/*.yaml."""

from pathlib import Path

from mica.content import read_yaml, translated
from mica.methodology.models import Edition

CONTENT_DIR = Path(__file__).resolve().parent / "content"


def load(report):
    editions = read_yaml(CONTENT_DIR / "editions.yaml")
    for item in editions:
        Edition.objects.update_or_create(
            slug=item["slug"],
            defaults={"status": item["status"], **translated(item, "version_label")},
        )
    report(f"editions: {len(editions)}")
