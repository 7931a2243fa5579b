"""The Korean page and the Korean pack against seed 001, chapter by chapter.

Issue 18: "Seed 001 chapter-by-chapter comparison test: every seed 001 sentence appears in
the Korean page and the Korean pack (whitespace-normalised), in the seed's order."

Seed 001 is the text of the owner's Korean page. Its lines are read as the page shows
them: a list marker ("  • ", "  1. ") is the list's, not the text's; and where the page
runs a label into the text beside it without a space ("외부 근거세계 최초 주장과 그 범위",
"…유효 실행의 비율시스템이 …"), the label and the text are two pieces.
"""

import re
import unicodedata
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from markdown_it import MarkdownIt

from mica.methodology.models import ContractItem, ReadingKind

pytestmark = pytest.mark.django_db

SEED_KO = Path(__file__).resolve().parents[2] / "fixtures/seeds/001_01e3a0fa6fa98298.txt"
FIRST_LINE, LAST_LINE = "방법론 초안", "이 모든 것을 누가 정하는가 →"  # the page's own text
LIST_MARKER = re.compile(r"^\s+(?:•|\d+\.)\s+")
SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
CHAPTER = re.compile(r"^(\d{1,2}) (\S.*)$")
BLOCK_TAGS = frozenset(
    "p li dt dd h1 h2 h3 h4 h5 h6 div section header footer nav ul ol dl br td th".split()
)
SUBSECTIONS = ("3.1", "5.1", "6.1", "6.2", "7.1", "8.1", "8.2", "8.3", "8.4", "10.1", "10.2")
SUBSECTIONS += ("11.1", "15.1")
LABELS = ("관문", "정의", "채점", "집계 규칙", "진단", "근거", "결측값", "주장", "한계")


def normalised(text):
    return " ".join(unicodedata.normalize("NFC", text).split())


def run_in_labels():
    """What the page runs into the text after it: a claim's kind, and the measure of an
    outcome axis ("정확도 · 확인된 … 비율" shows "정확도", then "확인된 … 비율" + detail)."""
    kinds = list(ReadingKind.objects.values_list("label_ko", flat=True))
    measures = [
        term.split(" · ", 1)[1]
        for term in ContractItem.objects.filter(contract_section__section_id="axes").values_list(
            "term_ko", flat=True
        )
        if " · " in term
    ]
    return [*kinds, *measures]


def pieces(line, labels):
    for label in labels:
        if line.startswith(label) and len(line) > len(label) and line[len(label)] != " ":
            return [label, line[len(label) :]]
    return [line]


def seed_chapters(labels):
    """[(chapter title, [sentences])]: the header first, then chapters 1 to 20."""
    lines = SEED_KO.read_text(encoding="utf-8").splitlines()
    start, end = lines.index(FIRST_LINE), lines.index(LAST_LINE)
    chapters = [("header", [])]
    for line in lines[start : end + 1]:
        line = LIST_MARKER.sub("", line).strip()
        if not line:
            continue
        if CHAPTER.match(line) and 1 <= int(CHAPTER.match(line).group(1)) <= 20:
            chapters.append((line, []))
        for piece in pieces(line, labels):
            chapters[-1][1].extend(normalised(s) for s in SENTENCE_END.split(piece) if s.strip())
    return chapters


class _Text(HTMLParser):
    """The words of a page as a reader meets them: tags dropped, blocks apart."""

    def __init__(self):
        super().__init__()
        self.parts, self.hidden = [], 0

    def handle_starttag(self, tag, attrs):
        self.hidden += tag in ("script", "style", "title")
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        self.hidden -= tag in ("script", "style", "title")
        if tag in BLOCK_TAGS:
            self.parts.append(" ")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def html_text(html):
    parser = _Text()
    parser.feed(html)
    return normalised("".join(parser.parts))


def markdown_text(markdown):
    return html_text(MarkdownIt("commonmark").render(markdown))


def out_of_order(text, chapters):
    """The seed's sentences `text` lacks, or holds only before the one preceding them."""
    at, missing = 0, []
    for title, sentences in chapters:
        for sentence in sentences:
            found = text.find(sentence, at)
            if found == -1:
                missing.append(f"{title}: {sentence}")
            else:
                at = found + len(sentence)
    return missing


def korean_pack():
    out = StringIO()
    call_command("export_methodology", "--lang", "ko", stdout=out)
    return out.getvalue()


@pytest.fixture
def chapters(canonical_content):
    found = seed_chapters(run_in_labels())
    assert [title.split()[0] for title, _s in found[1:]] == [str(n) for n in range(1, 21)]
    assert sum(len(sentences) for _t, sentences in found) > 900
    return found


def test_every_seed_001_sentence_is_on_the_korean_page_in_order(client, chapters):
    page = html_text(client.get("/ko/methodology/").text)
    missing = out_of_order(page, chapters)
    assert missing == [], "\n".join(missing[:20])


def test_every_seed_001_sentence_is_in_the_korean_pack_in_order(chapters):
    missing = out_of_order(markdown_text(korean_pack()), chapters)
    assert missing == [], "\n".join(missing[:20])


def test_the_comparison_sees_a_sentence_missing_or_out_of_order(chapters):
    """The check can fail: a dropped sentence and two swapped ones are both found."""
    text = markdown_text(korean_pack())
    first, second = chapters[1][1][0], chapters[1][1][1]
    assert out_of_order(text.replace(second, ""), chapters) == [f"{chapters[1][0]}: {second}"]
    swapped = [("x", [second, first])]
    assert out_of_order(text, swapped) == [f"x: {first}"]


def test_subsections_sit_in_their_chapters_with_their_labels_and_numbers(canonical_content):
    """Seed 001: chapter 3's claims, then "관문", then "3.1 공개 규칙", then chapter 4."""
    pack = korean_pack()
    assert "## 3 현재 벤치마크 수명주기와 상태" in pack
    chapter_3 = pack.index("## 3 현재")
    assert chapter_3 < pack.index("*관문*\n\n### 3.1 공개 규칙") < pack.index("## 4 지금")
    for number in SUBSECTIONS:
        chapter = number.split(".")[0]
        heading = re.search(rf"^### {re.escape(number)} ", pack, re.MULTILINE)
        assert heading, number
        own_chapter = re.findall(r"^## (\d+) ", pack[: heading.start()], re.MULTILINE)[-1]
        assert own_chapter == chapter, number
    for label in LABELS:
        assert re.search(rf"^\*{re.escape(label)}\*$", pack, re.MULTILINE), label
    assert "현재 운영 계약" not in pack  # every section has its chapter: no closing contract


def test_the_korean_page_shows_the_labels_numbers_and_header(client, canonical_content):
    page = client.get("/ko/methodology/").text
    assert '<p class="eyebrow">방법론 초안</p>' in page
    assert "<h1>무엇을 측정하고, 무엇을 측정하기를 거부하는가</h1>" in page
    assert "6개 시장 · 10개 과제 계열 · 3개의 독립된 결과 축." in page
    for label in LABELS:
        assert f'<p class="eyebrow">{label}</p>' in page, label
    assert '<span class="section-number">3.1</span> 공개 규칙</h3>' in page
    assert page.index('id="fail-closed-publication"') < page.index('id="publication"')
    assert page.index('id="publication"') < page.index('id="implemented-vs-planned"')
    assert '<strong class="run-in">차용한 점</strong>' in page and "차용:" not in page
    assert 'id="operational-contract"' not in page


def test_nothing_false_about_where_the_korean_pack_comes_from(canonical_content):
    """The English pack's source line names another project's files and build command
    (seed 000, kept byte for byte); the Korean pack says what is true of this portal."""
    pack = korean_pack()
    for foreign in ("src/data", "wiki.ts", "pnpm", "export:data"):
        assert foreign not in pack
    assert (
        "[방법론 Markdown 다운로드](/ko/methodology/downloads/mica-methodology-preview-0.1.ko.md)"
        " 이 페이지와 같은 정본 데이터에서 생성됩니다." in pack
    )
    assert pack.rstrip().endswith("- [이 모든 것을 누가 정하는가 →](/about/governance)")


NUMBERED_ITEM = re.compile(r"^  (\d+)\. (\S.*)$")


def seed_numbered_lists():
    """{first term: [(number, term)]} for each numbered list of seed 001 ("  1. 언어와
    격식", "  2. 신원과 형식", …), in the seed's order."""
    lists, current = {}, None
    for line in SEED_KO.read_text(encoding="utf-8").splitlines():
        match = NUMBERED_ITEM.match(line)
        if match and match.group(1) == "1":
            current = lists.setdefault(match.group(2), [])
        if match:
            current.append((int(match.group(1)), match.group(2)))
    return lists


def test_seed_001s_numbered_lists_keep_their_numbers_on_the_korean_page(client, canonical_content):
    """Issue 34: "seed 001's numbered lists keep their numbers". The Korean page numbers
    the items of 5.1, 6.1 and 8.4 as seed 001 does; the English page lists the same
    items by their terms, as seed 000 does ("- **Language and register.** ...")."""
    lists = seed_numbered_lists()
    assert len(lists) == 3
    korean = client.get("/ko/methodology/").text
    english = client.get("/methodology/").text
    for section_id, first_term in (
        ("locality-policy", "언어와 격식"),
        ("platform-policy", "대표 후보군"),
        ("value-policy", "동등한 제안"),
    ):
        items = lists[first_term]
        assert [number for number, _term in items] == list(range(1, len(items) + 1))
        section = korean[korean.index(f'id="{section_id}"') :]
        numbered = section[section.index("<ol") : section.index("</ol>")]
        terms = re.findall(r"<li [^>]*><strong>([^<]*?)\.?</strong>", numbered)
        assert terms == [term for _number, term in items]
        in_english = english[english.index(f'id="{section_id}"') :]
        assert in_english.index('<ul class="claims">') < in_english.index("</section>")
