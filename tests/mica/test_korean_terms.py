"""One Korean term per concept, wherever the portal writes Korean: its interface strings
(locale/ko), its content (*/content/*.yaml) and its manual (docs/*.ko.md).

Issue 34, item 7: "One term per concept ("스냅숏" or "스냅샷", not both)". The term is
seed 001's: the method's Korean text, which the Korean pages reproduce sentence by
sentence (tests/mica/methodology/test_korean_seed.py), writes "스냅샷", as in "스냅샷은
명시된 버전과 날짜로 식별됩니다. 평가 도중 변경된 시스템은 다른 스냅샷이며, 결과가
이어지지 않습니다."
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED_001 = ROOT / "tests/fixtures/seeds/001_01e3a0fa6fa98298.txt"

# {concept: (the term, the spellings that must not appear beside it)}
TERMS = {"snapshot": ("스냅샷", ("스냅숏",))}


def korean_texts():
    yield ROOT / "locale/ko/LC_MESSAGES/django.po"
    yield from sorted(ROOT.glob("*/content/**/*.yaml"))
    yield from sorted(ROOT.glob("mica/*/content/**/*.yaml"))
    yield from sorted((ROOT / "docs").glob("**/*.ko.md"))


def lines_with(spelling):
    return [
        f"{path.relative_to(ROOT)}:{number}"
        for path in korean_texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if spelling in line
    ]


@pytest.mark.parametrize("concept", sorted(TERMS))
def test_the_portal_writes_one_korean_term_for_each_concept(concept):
    term, others = TERMS[concept]
    assert term in SEED_001.read_text(encoding="utf-8"), "the term is the seed's"
    assert len(lines_with(term)) > 20 and others
    for other in others:
        assert lines_with(other) == [], f"{concept} is written {term}, as seed 001 writes it"


def test_the_texts_read_include_the_catalogue_the_content_and_the_manual():
    read = {path.relative_to(ROOT).parts[0] for path in korean_texts()}
    assert {"locale", "docs", "mica", "markets", "governance"} <= read
