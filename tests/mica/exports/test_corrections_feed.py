"""The corrections feed: one Atom entry a correction, under an id that never changes."""

import xml.etree.ElementTree as ET

import pytest
from django.utils import timezone

from governance.models import Correction
from mica.exports.formats.atom import ATOM_NS
from mica.exports.publish import exports_build_and_publish
from mica.methodology.models import Edition
from tests.mica.exports.conftest import published

pytestmark = pytest.mark.django_db

A = f"{{{ATOM_NS}}}"


def correction_entry_ids(export_dir):
    feed = ET.fromstring(published(export_dir)["mica-corrections.atom"])
    return [
        entry.find(f"{A}id").text
        for entry in feed.findall(f"{A}entry")
        if "#correction-" in entry.find(f"{A}id").text
    ]


def correct(section_id, text):
    return Correction.objects.create(
        edition=Edition.objects.get(),
        section_id=section_id,
        text_en=text,
        text_ko=f"{text} (한국어)",
        decided_on=timezone.localdate(),
    )


@pytest.mark.vendor
def test_two_corrections_of_one_claim_on_one_day_are_two_entries_with_stable_ids(
    canonical_content, export_dir
):
    """RFC 4287 §4.2.6: an entry's id is "a permanent, universally unique identifier"; and
    PORTAL.md: "A correction is shown wherever the corrected claim is shown". Two
    corrections of one claim decided the same day are two entries, and a regeneration
    gives each the id it had."""
    first = correct("why-mica-1", "The first correction.")
    second = correct("why-mica-1", "The second correction.")
    exports_build_and_publish(job_run_id=None)
    ids = correction_entry_ids(export_dir)
    assert len(ids) == len(set(ids)) == 2
    assert {i.rsplit("-", 1)[1] for i in ids} == {str(first.pk), str(second.pk)}
    third = correct("why-mica-2", "A later correction of another claim.")
    exports_build_and_publish(job_run_id=None)
    again = correction_entry_ids(export_dir)
    assert set(ids) < set(again) and len(again) == 3
    assert any(i.endswith(f"#correction-{third.pk}") for i in again)
