"""The Markdown packs, generated from the records: English equals the owner's seed byte for byte
until a correction adds its lines under the claim it corrects."""

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from catalogue.models import TaskDefinition
from mica.methodology.models import ChapterItem, ClaimKind, Reference

pytestmark = pytest.mark.django_db

SEED = Path(__file__).resolve().parents[2] / "fixtures/seeds/000_eec7d944ca90690a.txt"
KIND_LABELS = {
    "current-rule": "Current rule",
    "mica-policy": "MICA policy",
    "external-evidence": "External evidence",
    "open-question": "Open question",
}


def export(language="en"):
    out = StringIO()
    call_command("export_methodology", "--lang", language, stdout=out)
    return out.getvalue()


def first_difference(produced, expected):
    for number, (ours, theirs) in enumerate(
        zip(produced.split("\n"), expected.split("\n"), strict=False), start=1
    ):
        if ours != theirs:
            return f"line {number}:\n  pack: {ours!r}\n  seed: {theirs!r}"
    return f"lengths differ: pack {len(produced)} chars, seed {len(expected)} chars"


def test_english_pack_equals_the_seed_byte_for_byte(canonical_content):
    produced = export("en").encode("utf-8")
    expected = SEED.read_bytes()
    assert produced == expected, first_difference(produced.decode(), expected.decode())


def test_korean_pack_has_the_same_structure_in_korean(canonical_content):
    english, korean = export("en"), export("ko")
    assert korean.startswith("# MICA 방법론과 레퍼런스")
    assert "{{" not in korean and "{{" not in english
    assert "최소 유효 실행 수: 미정" in korean
    # Every claim of the English pack has a Korean line with a Korean kind label.
    assert korean.count("- **[") >= english.count("- **[") - 2
    for label in ("[현재 규칙]", "[MICA 정책]", "[외부 근거]", "[미해결 질문]"):
        assert label in korean


def test_counts_come_from_the_records(canonical_content):
    seed = SEED.read_text(encoding="utf-8")
    assert Reference.objects.count() == 56
    for kind, label in KIND_LABELS.items():
        in_seed = len(re.findall(rf"^- \*\*\[{re.escape(label)}\]", seed, re.MULTILINE))
        assert ChapterItem.objects.filter(kind=kind).count() == in_seed, kind
    assert set(ClaimKind.values) == set(KIND_LABELS)


def test_figures_follow_the_records(canonical_content):
    assert "Canonical task definitions: 100 (100 provisional" in export("en")
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(lifecycle="validated")
    pack = export("en")
    assert (
        "Canonical task definitions: 100 (99 provisional public-set candidates, 1 validated)"
        in pack
    )
    TaskDefinition.objects.filter(slug="ec-reschedule-three-party").update(task_set="holdout")
    assert "Canonical task definitions: 99 (99 provisional" in export("en")


def test_thresholds_appear_once_set(canonical_content):
    from mica.methodology.models import Edition

    Edition.objects.update(min_eligible_runs=30)
    pack = export("en")
    assert "- Minimum eligible runs: 30" in pack
    assert "- Minimum coverage: not set" in pack


def test_with_a_correction_the_english_pack_is_the_seed_plus_the_correction_under_its_claim(
    canonical_content,
):
    """Seed 000, Corrections: "A correction is published with the same prominence as the
    claim it corrects." The English pack is the owner's seed byte for byte only while no
    correction exists; a correction adds its lines under the claim it corrects, in the pack
    of each language, and changes nothing else."""
    import datetime

    from governance.models import Correction
    from mica.methodology.models import Edition

    Correction.objects.create(
        edition=Edition.objects.get(),
        section_id="world-first-claim",
        text_en="The review cutoff is stated in the claim.",
        text_ko="검토 기준일은 주장 안에 적혀 있습니다.",
        decided_on=datetime.date(2026, 12, 1),
    )
    seed_lines = SEED.read_text(encoding="utf-8").split("\n")
    pack_lines = export("en").split("\n")
    correction = "  - **Correction (2026-12-01).** The review cutoff is stated in the claim."
    assert pack_lines.count(correction) == 1
    at = pack_lines.index(correction)
    assert pack_lines[at - 1].startswith("- **[External evidence] The world-first claim")
    assert pack_lines[:at] + pack_lines[at + 1 :] == seed_lines
    korean = export("ko").split("\n")
    at = korean.index("  - **정정 (2026-12-01).** 검토 기준일은 주장 안에 적혀 있습니다.")
    assert "세계 최초 주장과 그 범위" in korean[at - 1]
