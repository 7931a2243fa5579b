"""The Korean pack against seed 001, line by line, numbering and punctuation included, as the
English pack is held to seed 000 (test_pack.py).

Issue 43, item 6: the pack printed the numbered items of 5.1, 6.1 and 8.4 as bullets,
cited by reference key ("(참고: webarena, …)"), doubled a term's full stop ("없음.."),
numbered 15.1 where seed 001 bullets it, and carried a "9.1" neither seed has.

Seed 001 is the text of the owner's Korean page; the pack is the same page as Markdown. The
test reads the pack as the page prints it, by rules that take markup away and add nothing:

- "## 3 제목" and "### 3.1 제목" read "3 제목" and "3.1 제목"; "*관문*" reads "관문";
  "**제목**" reads "제목"; a link reads as its text; "*ICLR 2024*" as "ICLR 2024".
- An item that opens with a bold lead-in is a term and its text, two lines, as the page
  sets a definition. The lead-in's closing full stop is the run-in heading's, as the page
  closes it, and not read: "**측정.**" reads "측정"; a term that ends in a stop of its own
  keeps it ("**성공한 과제 없음.**" reads "성공한 과제 없음.", a term of the records), and
  a second stop is read as written ("없음.." stays "없음.."). So
  "- **[외부 근거] 세계 최초 주장과 그 범위.** MICA는 …" reads
  "외부 근거세계 최초 주장과 그 범위" (the page's kind label runs into the term), then
  "MICA는 …". An outcome axis's measure runs into its text ("정확도", then "확인된 … 비율
  시스템이 …"); a status reads as the bullet "• 구현됨", its title, then its text.
- A numbered item keeps its number ("1. **언어와 격식.** 언어, …" reads "1. 언어와 격식",
  "언어, …"); a bullet keeps its bullet ("- 시뮬레이터 …" reads "• 시뮬레이터 …").
- A reference's "  - **차용한 점** …" reads "차용한 점 …"; an indented line reads unindented.
- Blank lines are not lines, in either text; seed 001's indentation is its page's.

Named, not compared: the pack's title line (the page's is the site's own chrome, "본문으로
건너뛰기", "MICA"), its current-status list (seed 000's "Current status", which seed 001's page
does not print), and the list markers of chapter 20's three lines (seed 001 prints them as
lines; test_korean_seed.py holds the pack's last line to "- [이 모든 것을 …](…)").
"""

import difflib
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from mica.methodology.models import ContractItem, Edition, ReadingKind
from mica.methodology.selectors import pack_content

pytestmark = pytest.mark.django_db

SEED_KO = Path(__file__).resolve().parents[2] / "fixtures/seeds/001_01e3a0fa6fa98298.txt"
FIRST_LINE, LAST_LINE = "방법론 초안", "이 모든 것을 누가 정하는가 →"  # the page's own text
STATUS_HEADING = "## 현재 상태"
COLOPHON_HEADING = "## 20 "

LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
BOLD = re.compile(r"\*\*(.+?)\*\*")
EMPHASIS = re.compile(r"(?<![*\w])\*([^*]+)\*(?![*\w])")
HEADING = re.compile(r"^#{2,3} (.+)$")
LEAD_IN = re.compile(r"^(?P<marker>- |\d+\. )\*\*(?P<term>.+?)\*\*(?: (?P<text>.*))?$")
NUMBERED = re.compile(r"^(\d+)\. (.*)$")


def seed_lines():
    """Seed 001's page, from its first line of text to its last, one line per line of text."""
    lines = SEED_KO.read_text(encoding="utf-8").splitlines()
    page = lines[lines.index(FIRST_LINE) : lines.index(LAST_LINE) + 1]
    return [line.strip() for line in page if line.strip()]


class Rules:
    """What the page runs together: the claim kinds, the outcome axes' measures, the states."""

    def __init__(self):
        self.kinds = list(ReadingKind.objects.values_list("label_ko", flat=True))
        axes = ContractItem.objects.filter(contract_section__section_id="axes")
        self.axes = {
            term.split(" · ", 1)[0] for term in axes.values_list("term_ko", flat=True) if term
        }
        edition = Edition.objects.get()
        labels = edition.pack_texts["pack"]["labels"]
        self.states = [labels["implemented"]["ko"], labels["planned"]["ko"]]
        self.stopped_terms = set(terms_ending_in_a_stop(pack_content(edition)))


def terms_ending_in_a_stop(value):
    """The records' Korean terms that close with a full stop of their own."""
    if isinstance(value, dict):
        term = value.get("term")
        if isinstance(term, dict) and (term.get("ko") or "").endswith("."):
            yield term["ko"]
        for inner in value.values():
            yield from terms_ending_in_a_stop(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from terms_ending_in_a_stop(inner)


def without_the_run_in_stop(term, rules):
    """The lead-in without the stop the pack closes it with (pack.full_stop)."""
    if term in rules.stopped_terms or not term.endswith(".") or term[:-1].endswith("."):
        return term
    return term[:-1]


def inline(text):
    return EMPHASIS.sub(r"\1", BOLD.sub(r"\1", LINK.sub(r"\1", text)))


def read_lead_in(marker, term, text, rules):
    """A term and its text as the page prints them."""
    number = marker.strip() if marker.strip() != "-" else None
    term = without_the_run_in_stop(term, rules)
    kind = re.match(r"^\[(.+?)\] (.+)$", term)
    if kind and kind.group(1) in rules.kinds:
        lines = [kind.group(1) + kind.group(2)]
    elif " · " in term and term.split(" · ", 1)[0] in rules.states:
        state, title = term.split(" · ", 1)
        lines = [f"• {state}", title]
    elif " · " in term and term.split(" · ", 1)[0] in rules.axes:
        axis, measure = term.split(" · ", 1)
        return [axis, measure + inline(text or "")]
    else:
        lines = [f"{number} {term}" if number else term]
    return lines + ([inline(text)] if text else [])


def pack_reading(pack, rules):
    """The pack's lines as the page prints them (the module's rules)."""
    lines = pack.split("\n")
    assert lines[0].startswith("# "), lines[0]
    read, skipping, colophon = [], False, False
    for line in lines[1:]:
        if line.startswith("## "):
            skipping = line == STATUS_HEADING
            colophon = line.startswith(COLOPHON_HEADING)
        if skipping or not line.strip():
            continue
        heading = HEADING.match(line)
        lead_in = LEAD_IN.match(line)
        if heading:
            read.append(inline(heading.group(1)))
        elif lead_in:
            read.extend(read_lead_in(**lead_in.groupdict(), rules=rules))
        elif line.startswith("  - "):
            read.append(inline(line[4:]))
        elif line.startswith("- "):
            read.append(("" if colophon else "• ") + inline(line[2:]))
        else:
            read.append(inline(line.strip()))
    return read


def korean_pack():
    out = StringIO()
    call_command("export_methodology", "--lang", "ko", stdout=out)
    return out.getvalue()


def differences(produced, expected):
    """A unified diff, pack against seed, of the first lines that differ."""
    diff = difflib.unified_diff(expected, produced, "seed 001", "Korean pack", n=1, lineterm="")
    return "\n".join(list(diff)[:80])


def test_the_korean_pack_reads_as_seed_001_line_by_line(canonical_content):
    produced = pack_reading(korean_pack(), Rules())
    expected = seed_lines()
    assert produced == expected, differences(produced, expected)


def test_the_reading_sees_a_bullet_a_key_citation_and_a_doubled_stop(canonical_content):
    """The comparison can fail: the defects of issue 43 each show as a differing line."""
    rules, pack = Rules(), korean_pack()
    expected = seed_lines()
    for right, wrong in (
        ("1. **언어와 격식.** ", "- **언어와 격식.** "),  # a numbered item as a bullet
        ("- 시뮬레이터 결과는", "1. 시뮬레이터 결과는"),  # a bullet numbered
        ("- **성공한 과제 없음.** ", "- **성공한 과제 없음..** "),  # a doubled stop
        (  # a citation by reference key
            "아닙니다.\n- **[외부 근거] 측정되지",
            "아닙니다. (참고: webarena)\n- **[외부 근거] 측정되지",
        ),
    ):
        assert pack.count(right) == 1, right
        mutated = pack_reading(pack.replace(right, wrong), rules)
        assert mutated != expected, wrong
        assert differences(mutated, expected), wrong
    with_section = pack.replace("\n## 10 ", "\n### 9.1 하나의 시스템, 여러 모델\n\n## 10 ")
    shown = differences(pack_reading(with_section, rules), expected)
    assert "+9.1 하나의 시스템, 여러 모델" in shown


def test_the_korean_pages_lists_are_numbered_and_bulleted_as_the_pack_and_seed_001(
    client, canonical_content
):
    """The page shares the pack's contract records: 5.1, 6.1 and 8.4 are ordered lists,
    15.1 a list of bullets, on the Korean page as in the pack and seed 001; the English
    page numbers 15.1 as seed 000 does."""
    korean = client.get("/ko/methodology/").text
    english = client.get("/methodology/").text
    pack = korean_pack()

    def list_of(page, section_id):
        section = page[page.index(f'id="{section_id}"') :]
        section = section[: section.index("</section>")]
        return "ol" if "<ol" in section else "ul"

    for section_id in ("locality-policy", "platform-policy", "value-policy"):
        assert list_of(korean, section_id) == "ol", section_id
    assert list_of(korean, "limits") == "ul"
    assert list_of(english, "limits") == "ol"
    numbered_in_pack = re.findall(r"^(\d+)\. \*\*", pack, re.MULTILINE)
    numbered_in_seed = re.findall(r"^  (\d+)\. ", SEED_KO.read_text(encoding="utf-8"), re.MULTILINE)
    assert numbered_in_pack == numbered_in_seed
    assert len(numbered_in_pack) == 18
