"""Words in tables stay whole, at 320 px and on a desktop, in both languages.

Issue 18, "Typography": "Table cells break words letter by letter ("Ma/rke/t", 변/형/필/요
one syllable per line) from `overflow-wrap: anywhere` on the body"; to build: "words
never broken mid-word in tables; Korean uses `word-break: keep-all` where it reads
better; long ids still wrap without overflow at 320 px."
"""

import pytest

from governance.models import GateCell
from tests.browser.conftest import sideways_overflow
from tests.browser.reading import db, site  # noqa: F401 (the fixtures)

pytestmark = pytest.mark.browser

WIDTHS = {"narrow": {"width": 320, "height": 640}, "desktop": {"width": 1280, "height": 900}}

# Every word of every table cell, as a browser laid it out: a run of letters (Latin or
# Hangul) whose pieces sit on more than one line was broken mid-word. Ids and checksums
# (code, .checksum) are not words: they may wrap anywhere, and must, to fit 320 px.
SPLIT_WORDS = """() => {
  const notWords = "code, kbd, samp, pre, .checksum";
  const split = [];
  let words = 0;
  for (const cell of document.querySelectorAll("main th, main td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest(notWords)) continue;
      for (const match of node.data.matchAll(/[\\p{L}\\p{M}]+/gu)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        if (rects.length === 0) continue;
        words += 1;
        const tops = rects.map((r) => r.top);
        const height = Math.min(...rects.map((r) => r.height));
        if (Math.max(...tops) - Math.min(...tops) > height / 2) split.push(match[0]);
      }
    }
  }
  return {words, split};
}"""


@pytest.fixture(scope="module")
def table_pages(shared_content):
    """Every kind of page with a table, with run records so the result tables fill
    (loaded once for the module, which ends by putting the canonical content back)."""
    from catalogue.models import TaskDefinition

    shared_content.add("load_demo_runs")
    cell = GateCell.objects.first()
    task = TaskDefinition.objects.filter(task_set="public").order_by("family", "position").first()
    assert cell and task
    return [
        "/markets/", "/governance/", "/api/docs/", "/downloads/", "/editions/",
        f"/tasks/{task.slug}/", "/results/", "/systems/demo-harbor/", "/evidence/",
        f"/evidence/{cell.cell_id}/",
    ]  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_no_word_in_a_table_is_broken_across_lines(browser, site, table_pages, width, prefix):
    context = browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    try:
        broken, overflowing, words = {}, {}, 0
        assert len(table_pages) > 5
        for path in table_pages:
            page.goto(f"{site}{prefix}{path}")
            found = page.evaluate(SPLIT_WORDS)
            words += found["words"]
            if found["split"]:
                broken[path] = found["split"][:20]
            if (overflow := sideways_overflow(page)) > 0:
                overflowing[path] = overflow
    finally:
        context.close()
    assert words > 1000
    assert broken == {}, f"words broken mid-word at {width}: {broken}"
    assert overflowing == {}, f"pages scrolling sideways at {width}: {overflowing}"


def test_korean_keeps_its_words_whole_and_ids_still_wrap(browser, site, table_pages):
    """Korean lines break between words (keep-all), never between syllables; an id
    longer than a 320 px screen wraps in its cell instead of widening the page."""
    context = browser.new_context(viewport=WIDTHS["narrow"])
    page = context.new_page()
    try:
        page.goto(f"{site}/ko/markets/")
        word_break = page.evaluate("getComputedStyle(document.querySelector('main td')).wordBreak")
        page.goto(f"{site}/ko/api/docs/")
        # API paths set in cells as code, the longest wider than the screen unwrapped:
        # each on lines of its own within the screen.
        id_lines = page.evaluate(
            """() => [...document.querySelectorAll("main td code, main th code")]
                 .filter((code) => code.textContent.length > 40)
                 .map((code) => [code.getClientRects().length,
                                 code.getBoundingClientRect().width <= innerWidth])"""
        )
    finally:
        context.close()
    assert word_break == "keep-all"
    assert id_lines and all(lines > 1 and fits for lines, fits in id_lines)
