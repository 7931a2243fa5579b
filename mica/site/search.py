"""Site search: claims, chapters, glossary terms, public tasks and markets in one language.

Each kind of record is found with one query, whatever the number of hits. On
PostgreSQL the match is full-text (config "simple", because no stemmer fits
Korean; every word is matched as a prefix so particles do not hide a word);
on SQLite every word must occur as a case-insensitive substring. Holdout tasks
never appear: tasks are read through `task_public_list`, the public's one door.

Excerpts are built in Python from the same columns, as lists of (text, match)
parts, so the template marks the hits and escapes everything itself.
"""

import html
import re
import unicodedata
from dataclasses import dataclass, field
from functools import reduce
from operator import or_

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection
from django.db.models import F, Q
from django.urls import reverse
from django.utils import translation
from django.utils.html import strip_tags
from django.utils.translation import gettext_lazy as _
from markdown_it import MarkdownIt

from catalogue.selectors import task_public_list
from markets.selectors import market_edition_list
from mica.bilingual import LANGUAGES
from mica.methodology import models as methodology
from mica.methodology.facts import live_facts
from mica.methodology.pack import fill_placeholders
from mica.methodology.selectors import chapter_list, edition_current, glossary_list

MAX_QUERY_CHARS = 200
MAX_WORDS = 10
HITS_PER_KIND = 20
EXCERPT_CHARS = 180
# How much text to keep before the first hit, so the excerpt reads as context.
EXCERPT_LEAD = 60

# Words are whatever lies between spaces and ASCII punctuation. Keeping every
# other character keeps Hangul, kana, Thai marks and digits whole, and leaves
# nothing a tsquery could read as an operator.
_WORD = re.compile(r"[^\s!-/:-@\[-`{-~]+")
_MARKDOWN = MarkdownIt("commonmark", {"html": True})


@dataclass(frozen=True)
class Part:
    """A run of excerpt text; `match` runs are shown marked."""

    text: str
    match: bool = False


@dataclass
class Hit:
    title: list
    excerpt: list
    url: str
    tag: str = ""
    native: list = field(default_factory=list)
    native_lang: str = ""


@dataclass
class Group:
    kind: str
    label: str
    hits: list
    more: bool = False


@dataclass
class SearchResults:
    query: str = ""
    words: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    shortened: bool = False
    words_dropped: bool = False

    @property
    def total(self):
        return sum(len(group.hits) for group in self.groups)

    @property
    def found(self):
        return [group for group in self.groups if group.hits]


def clean_query(raw):
    """(text, shortened): printable, NFC-normalised, single-spaced, at most MAX_QUERY_CHARS."""
    text = unicodedata.normalize("NFC", str(raw or ""))
    text = " ".join(text.split())
    # Control and format characters (NUL among them) would only break the SQL.
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    shortened = len(text) > MAX_QUERY_CHARS
    return text[:MAX_QUERY_CHARS].strip(), shortened


def query_words(text):
    """(words, dropped): distinct words of the query, at most MAX_WORDS of them.

    A lone ASCII letter is left out: it is the tail of "world's" or an initial,
    and would match (and mark) nearly every record.
    """
    words, seen = [], set()
    for word in _WORD.findall(text):
        key = word.casefold()
        if key in seen or (len(word) == 1 and word.isascii() and word.isalpha()):
            continue
        seen.add(key)
        words.append(word)
    return words[:MAX_WORDS], len(words) > MAX_WORDS


def search(query, language, edition=None):
    """Records whose reader-language text holds every word of `query`, grouped by kind."""
    text, shortened = clean_query(query)
    words, dropped = query_words(text)
    results = SearchResults(query=text, words=words, shortened=shortened, words_dropped=dropped)
    if not words:
        return results
    # Only the languages that have columns; anything else reads English.
    language = language if language in LANGUAGES else LANGUAGES[0]
    edition = edition or edition_current()
    context = _Context(edition, language, words)
    # Links and labels in the language searched, whatever language is active.
    with translation.override(language):
        results.groups = [kind.group(context) for kind in KINDS]
    return results


class _Context:
    """What every kind needs: the edition, the language, the words and their highlighter."""

    def __init__(self, edition, language, words):
        self.edition = edition
        self.language = language
        self.words = words
        alternatives = sorted({re.escape(w) for w in words}, key=len, reverse=True)
        self.pattern = re.compile("|".join(alternatives), re.IGNORECASE)
        self._facts = None

    def column(self, name):
        return f"{name}_{self.language}"

    def facts(self):
        # Read only when an excerpt quotes a live figure, and then once.
        if self._facts is None:
            facts = live_facts(self.edition) if self.edition else {}
            self._facts = facts.get(self.language, {})
        return self._facts

    def method_text(self, text):
        """A methodology text as a reader sees it: figures filled, Markdown reduced to text."""
        text = text or ""
        if "{{" in text:
            text = fill_placeholders(text, self.facts())
        return _plain(strip_tags(_MARKDOWN.renderInline(text)))

    def holds_every_word(self, record):
        text = "\n".join((record.title, *record.bodies, *record.also)).casefold()
        return all(word.casefold() in text for word in self.words)

    def marked(self, text):
        return highlight(text, self.pattern)

    def excerpt(self, *texts):
        return excerpt(texts, self.pattern)


def _plain(text):
    return " ".join(html.unescape(text or "").split())


def highlight(text, pattern):
    """`text` as parts, each hit of `pattern` its own marked part."""
    parts, position = [], 0
    for hit in pattern.finditer(text):
        if hit.start() > position:
            parts.append(Part(text[position : hit.start()]))
        parts.append(Part(hit.group(), match=True))
        position = hit.end()
    if position < len(text):
        parts.append(Part(text[position:]))
    return parts


def excerpt(texts, pattern):
    """A short window of the first text that holds a hit (else of the first text), marked."""
    texts = [t for t in texts if t]
    if not texts:
        return []
    chosen, first = texts[0], None
    for text in texts:
        first = pattern.search(text)
        if first:
            chosen = text
            break
    start = _word_start(chosen, max(0, first.start() - EXCERPT_LEAD)) if first else 0
    end = _word_end(chosen, start + EXCERPT_CHARS)
    window = chosen[start:end].strip()
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(chosen) else ""
    return highlight(prefix + window + suffix, pattern)


def _word_start(text, index):
    """Move forward to the start of a word, so an excerpt never opens mid-word."""
    if index == 0:
        return 0
    space = text.find(" ", index)
    return index if space == -1 or space - index > 20 else space + 1


def _word_end(text, index):
    if index >= len(text):
        return len(text)
    space = text.rfind(" ", 0, index)
    return index if space == -1 or index - space > 20 else space


def _matching(queryset, columns, words, order):
    """Rows where every word occurs in one of `columns`, best first; one query when read."""
    if connection.vendor == "postgresql":
        document = SearchVector(*columns, config="simple")
        tsquery = SearchQuery(
            " & ".join(f"{word}:*" for word in words), search_type="raw", config="simple"
        )
        return (
            queryset.annotate(search_document=document, search_rank=SearchRank(document, tsquery))
            .filter(search_document=tsquery)
            .order_by(F("search_rank").desc(), *order)
        )
    for word in words:
        queryset = queryset.filter(
            reduce(or_, (Q(**{f"{column}__icontains": word}) for column in columns))
        )
    return queryset.order_by(*order)


@dataclass
class Shown:
    """A found record as the reader sees it: its searched texts, filled in, and its link."""

    title: str
    bodies: tuple
    url: str
    tag: str = ""
    # Searched texts shown elsewhere on the hit (a slug, a family, a native name).
    also: tuple = ()
    native: str = ""
    native_lang: str = ""

    def hit(self, context):
        return Hit(
            title=context.marked(self.title),
            excerpt=context.excerpt(*self.bodies),
            url=self.url,
            tag=self.tag,
            native=context.marked(self.native) if self.native else [],
            native_lang=self.native_lang,
        )


@dataclass(frozen=True)
class Kind:
    """One kind of record: how to find it and how a reader sees one."""

    key: str
    label: str
    find: object
    show: object

    def group(self, context):
        shown = []
        for row in self.find(context):
            record = self.show(context, row)
            # The columns hold live-figure placeholders ("{{market_count}}") a reader
            # never sees; a record is found only for words its shown text holds.
            if context.holds_every_word(record):
                shown.append(record)
            if len(shown) > HITS_PER_KIND:
                break
        hits = [record.hit(context) for record in shown[:HITS_PER_KIND]]
        return Group(self.key, self.label, hits, more=len(shown) > HITS_PER_KIND)


def _find_claims(c):
    items = methodology.ChapterItem.objects.filter(edition=c.edition).select_related("chapter")
    return _matching(
        items,
        [c.column("term"), c.column("detail")],
        c.words,
        ["chapter__position", "position", "pk"],
    )


def _item_kind(item):
    if item.item_type == methodology.ItemType.CLAIM and item.kind:
        return item.get_kind_display()
    if item.item_type == methodology.ItemType.STATUS and item.state:
        return item.get_state_display()
    return item.get_item_type_display()


def _show_claim(c, item):
    chapter = item.chapter
    chapter_title = c.method_text(getattr(chapter, c.column("title")))
    return Shown(
        title=c.method_text(getattr(item, c.column("term"))),
        bodies=(c.method_text(getattr(item, c.column("detail"))),),
        url=reverse("methodology:claim", args=[item.section_id]),
        tag=f"{_item_kind(item)} · {chapter.number}. {chapter_title}",
    )


def _find_chapters(c):
    chapters = chapter_list(c.edition).prefetch_related(None)
    return _matching(chapters, [c.column("title"), c.column("lead")], c.words, ["position", "pk"])


def _show_chapter(c, chapter):
    return Shown(
        title=f"{chapter.number}. {c.method_text(getattr(chapter, c.column('title')))}",
        bodies=(c.method_text(getattr(chapter, c.column("lead"))),),
        url=reverse("methodology:claim", args=[chapter.section_id]),
    )


def _find_glossary(c):
    terms = glossary_list(c.edition)
    return _matching(terms, [c.column("term"), c.column("definition")], c.words, ["position", "pk"])


def _show_glossary(c, term):
    return Shown(
        title=c.method_text(getattr(term, c.column("term"))),
        bodies=(c.method_text(getattr(term, c.column("definition"))),),
        url=reverse("methodology:claim", args=[term.section_id]),
    )


def _find_tasks(c):
    # The public list without its prefetches: a hit shows only its version and family.
    tasks = task_public_list().prefetch_related(None)
    version = "current_version__"
    columns = [
        version + c.column("title"),
        version + c.column("final_state"),
        version + c.column("confirmation_boundary"),
        "family__" + c.column("label"),
        "slug",
    ]
    return _matching(tasks, columns, c.words, ["family__position", "position", "slug"])


def _show_task(c, task):
    version = task.current_version
    family = getattr(task.family, c.column("label"))
    return Shown(
        title=_plain(getattr(version, c.column("title"))),
        bodies=(
            _plain(getattr(version, c.column("final_state"))),
            _plain(getattr(version, c.column("confirmation_boundary"))),
        ),
        url=reverse("catalogue:task-detail", args=[task.slug]),
        tag=f"{family} · {task.slug}",
        also=(family, task.slug),
    )


def _find_markets(c):
    market_editions = market_edition_list(c.edition).select_related(None).prefetch_related(None)
    if c.edition is None:
        # Without an edition the selector would fall back to the current one, which is none.
        return market_editions.none()
    columns = [
        "market__" + c.column("name"),
        "market__native_name",
        "market__code",
        c.column("edition_note"),
        c.column("profile_summary"),
    ]
    return _matching(
        market_editions.select_related("market"), columns, c.words, ["market__display_order"]
    )


def _show_market(c, market_edition):
    market = market_edition.market
    name = getattr(market, c.column("name"))
    return Shown(
        title=f"{market.code} · {name}",
        bodies=(
            _plain(getattr(market_edition, c.column("profile_summary"))),
            _plain(getattr(market_edition, c.column("edition_note"))),
        ),
        url=reverse("markets:market-detail", args=[market.code.lower()]),
        also=(market.native_name,),
        # The native name is shown when it says something the reader's name does not.
        native=market.native_name if market.native_name != name else "",
        native_lang=market.native_lang,
    )


KINDS = [
    Kind("claims", _("Claims and items"), _find_claims, _show_claim),
    Kind("chapters", _("Chapters"), _find_chapters, _show_chapter),
    Kind("glossary", _("Glossary"), _find_glossary, _show_glossary),
    Kind("tasks", _("Tasks"), _find_tasks, _show_task),
    Kind("markets", _("Markets"), _find_markets, _show_market),
]
