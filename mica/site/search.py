"""Site search: claims, chapters, the contract, glossary, public tasks and market pages.

Everything is searched in one language, the reader's.

Each kind of record is found with one query, whatever the number of hits. A
market is found by the text of its whole page (hazards, local changes,
situations, platforms, datasheet, data statement), joined into columns by
subqueries, so it too costs one query.

English words are matched with their usual endings ("refunds" finds
"refund" and "refundable"): on PostgreSQL through full-text search with the
`english` configuration (and `simple`, so that stop words and ids are still
found); on SQLite, and for the excerpt in Python, through the light stemmer
`english_stem`, whose stem must begin a word of the text. Korean words are
looked for as substrings on both databases, so a word is found without its
particle ("환불" in "환불을"); on PostgreSQL pg_trgm ranks whole-word hits
first. Holdout tasks never appear: tasks are read through `task_public_list`,
the public's one door.

Excerpts are built in Python from the same columns, as lists of (text, match)
parts, so the template marks the hits and escapes everything itself.
"""

import html
import re
import unicodedata
from dataclasses import dataclass, field
from functools import reduce
from operator import add, or_
from urllib.parse import urlencode

from django.contrib.postgres.aggregates import StringAgg
from django.contrib.postgres.search import (
    SearchQuery,
    SearchRank,
    SearchVector,
    TrigramWordSimilarity,
)
from django.db import connection
from django.db.models import Aggregate, F, OuterRef, Q, Subquery, TextField, Value
from django.db.models.functions import Coalesce, Concat
from django.urls import reverse
from django.utils import translation
from django.utils.html import strip_tags
from django.utils.translation import gettext_lazy as _
from markdown_it import MarkdownIt

from catalogue.selectors import task_public_list
from markets.models import (
    Hazard,
    IntegrationSituation,
    LocalChange,
    RegistrationStatus,
    RepresentativePlatform,
)
from markets.presenters import datasheet_text
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
# Between the texts of a market page joined into one column: a character no
# text holds, so Python can split the column back into the texts it shows.
PIECE = "\x1f"

# Words are whatever lies between spaces and ASCII punctuation. Keeping every
# other character keeps Hangul, kana, Thai marks and digits whole, and leaves
# nothing a tsquery could read as an operator.
_WORD = re.compile(r"[^\s!-/:-@\[-`{-~]+")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
_MARKDOWN = MarkdownIt("commonmark", {"html": True})
# English endings the stemmer takes off, longest first; a stem keeps at least
# three letters and a vowel, so "need", "bring" and "bus" stay whole.
_ENDINGS = ("sses", "ies", "ing", "es", "ed", "s")
_VOWELS = set("aeiouy")


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


@dataclass(frozen=True)
class Elsewhere:
    """The other language version's search for the same words, offered in their script."""

    language: str
    url: str


@dataclass
class SearchResults:
    query: str = ""
    words: list = field(default_factory=list)
    groups: list = field(default_factory=list)
    shortened: bool = False
    words_dropped: bool = False
    language: str = LANGUAGES[0]
    elsewhere: Elsewhere | None = None

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


def english_stem(word):
    """The part of an English word its inflected forms share: "refunds" -> "refund".

    Deliberately light: only plural, -ed and -ing endings, then a final "e" or
    "y", so the stem is a prefix of the other forms ("change" -> "chang" finds
    "changing"; "policy" -> "polic" finds "policies"). Anything not plain ASCII
    letters is left as it is.
    """
    stem = word.casefold()
    if not (stem.isascii() and stem.isalpha()):
        return stem
    for ending in _ENDINGS:
        if stem.endswith(ending) and _stem_fits(stem[: -len(ending)]):
            stem = _ending_off(stem, ending)
            break
    if len(stem) >= 5 and stem[-1] in "ey" and stem[-2] not in _VOWELS:
        stem = stem[:-1]
    return stem


def _stem_fits(rest):
    return len(rest) >= 3 and any(letter in _VOWELS for letter in rest)


def _ending_off(word, ending):
    rest = word[: -len(ending)]
    if ending == "sses":
        return rest + "ss"
    if ending == "es" and not rest.endswith(("x", "ch", "sh", "ss", "z")):
        return word[:-1]  # "rates" -> "rate": only the plural "s" goes
    if ending == "s" and rest.endswith(("s", "u", "i")):
        return word  # "class", "status", "analysis" are not plurals
    if ending == "ed" and rest.endswith("e"):
        return word[:-1]  # "agreed" -> "agree"
    if ending in ("ed", "ing") and len(rest) > 3 and rest[-1] == rest[-2] not in "lsz":
        return rest[:-1]  # "planned" -> "plan", "running" -> "run"
    return rest


def written_in(words):
    """The language of the words' script: "ko" for Hangul, "en" for Latin letters, else ""."""
    if any(_HANGUL.search(word) for word in words):
        return "ko"
    if words and all(word.isascii() for word in words) and any(w.isalpha() for w in words):
        return "en"
    return ""


def search(query, language, edition=None):
    """Records whose reader-language text holds every word of `query`, grouped by kind."""
    text, shortened = clean_query(query)
    words, dropped = query_words(text)
    # Only the languages that have columns; anything else reads English.
    language = language if language in LANGUAGES else LANGUAGES[0]
    results = SearchResults(
        query=text, words=words, shortened=shortened, words_dropped=dropped, language=language
    )
    if not words:
        return results
    edition = edition or edition_current()
    context = _Context(edition, language, words)
    # Links and labels in the language searched, whatever language is active.
    with translation.override(language):
        results.groups = [kind.group(context) for kind in KINDS]
    if not results.total:
        results.elsewhere = _elsewhere(text, language, words)
    return results


def _elsewhere(text, language, words):
    """The other version's search, when nothing was found and the words are in its script.

    Each version searches only its own language's text, so a Korean query on the
    English page finds nothing; the honest hint is to switch, not to shorten.
    """
    script = written_in(words)
    if script in ("", language) or script not in LANGUAGES:
        return None
    with translation.override(script):
        url = reverse("site:search")
    return Elsewhere(script, f"{url}?{urlencode({'q': text})}")


class _Context:
    """What every kind needs: the edition, the language, the words and their highlighter."""

    def __init__(self, edition, language, words):
        self.edition = edition
        self.language = language
        self.words = words
        self.english = language == "en"
        # What must occur in a record's text for each word: its stem in English.
        self.terms = [english_stem(w) if self.english else w.casefold() for w in words]
        # An English term starts a word and its mark runs to the word's end ("refund"
        # marks "refundable", "the" never marks "synthetic"); a Korean term is found
        # anywhere, since particles and compounds attach to the word it names.
        head, tail = (r"\b", r"\w*") if self.english else ("", "")
        alternatives = sorted({re.escape(t) for t in self.terms}, key=len, reverse=True)
        self.pattern = re.compile(f"{head}(?:{'|'.join(alternatives)}){tail}", re.IGNORECASE)
        self._term_patterns = [re.compile(head + re.escape(t), re.IGNORECASE) for t in self.terms]
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
        text = "\n".join((record.title, *record.bodies, *record.also))
        return all(term.search(text) for term in self._term_patterns)

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
    return _excerpt_of(texts, pattern)[0]


def _excerpt_of(texts, pattern):
    """(parts, index): the marked excerpt and which of `texts` it was cut from (-1: none)."""
    texts = [(index, text) for index, text in enumerate(texts) if text]
    if not texts:
        return [], -1
    (index, chosen), first = texts[0], None
    for position, text in texts:
        first = pattern.search(text)
        if first:
            index, chosen = position, text
            break
    start = _word_start(chosen, max(0, first.start() - EXCERPT_LEAD)) if first else 0
    end = _word_end(chosen, start + EXCERPT_CHARS)
    window = chosen[start:end].strip()
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(chosen) else ""
    return highlight(prefix + window + suffix, pattern), index


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


def _matching(queryset, columns, context, order):
    """Rows where every word occurs in one of `columns`, best first; one query when read."""
    if connection.vendor != "postgresql":
        return _holding_terms(queryset, columns, context.terms).order_by(*order)
    if context.english:
        return _english_full_text(queryset, columns, context.words, order)
    return _substrings_ranked_by_trigrams(queryset, columns, context.words, order)


def _holding_terms(queryset, columns, terms):
    """Rows where every term occurs as a substring of one of `columns` (any case)."""
    for term in terms:
        queryset = queryset.filter(
            reduce(or_, (Q(**{f"{column}__icontains": term}) for column in columns))
        )
    return queryset


def _prefix_query(words, config):
    # Every word as a prefix: "refunds:*" reads 'refund':* in English.
    return SearchQuery(" & ".join(f"{w}:*" for w in words), search_type="raw", config=config)


def _english_full_text(queryset, columns, words, order):
    """English full text: each word stemmed (`english`) or, failing that, as it is (`simple`).

    The `english` configuration drops stop words ("the") and would then match
    nothing; `simple` keeps them, and keeps ids such as slugs whole.
    """
    stemmed = SearchVector(*columns, config="english")
    plain = SearchVector(*columns, config="simple")
    queryset = queryset.annotate(search_stemmed=stemmed, search_plain=plain)
    for word in words:
        queryset = queryset.filter(
            Q(search_stemmed=_prefix_query([word], "english"))
            | Q(search_plain=_prefix_query([word], "simple"))
        )
    rank = SearchRank(F("search_stemmed"), _prefix_query(words, "english")) + SearchRank(
        F("search_plain"), _prefix_query(words, "simple")
    )
    return queryset.annotate(search_rank=rank).order_by(F("search_rank").desc(), *order)


def _substrings_ranked_by_trigrams(queryset, columns, words, order):
    """Korean: every word as a substring, so particles and endings need not be typed.

    pg_trgm's word similarity then puts records holding the word on its own
    ("환불") before those holding it inside a longer word ("환불을").
    """
    texts = [Coalesce(F(column), Value(""), output_field=TextField()) for column in columns]
    # A space between columns, so the last word of one never runs into the next.
    spaced = [part for text in texts for part in (text, Value(" "))]
    document = Concat(*spaced, output_field=TextField())
    rank = reduce(add, (TrigramWordSimilarity(word, document) for word in words))
    queryset = _holding_terms(queryset, columns, [w.casefold() for w in words])
    return queryset.annotate(search_rank=rank).order_by(F("search_rank").desc(), *order)


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
    # The page section each body is shown in, so a hit links to where its excerpt is.
    anchors: tuple = ()

    def hit(self, context):
        parts, index = _excerpt_of(self.bodies, context.pattern)
        anchor = self.anchors[index] if 0 <= index < len(self.anchors) else ""
        # A hit in the name is a hit on the whole page: link to its top.
        if context.pattern.search(f"{self.title}\n{self.native}"):
            anchor = ""
        return Hit(
            title=context.marked(self.title),
            excerpt=parts,
            url=f"{self.url}#{anchor}" if anchor else self.url,
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
        c,
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
    return _matching(chapters, [c.column("title"), c.column("lead")], c, ["position", "pk"])


def _show_chapter(c, chapter):
    return Shown(
        title=f"{chapter.number}. {c.method_text(getattr(chapter, c.column('title')))}",
        bodies=(c.method_text(getattr(chapter, c.column("lead"))),),
        url=reverse("methodology:claim", args=[chapter.section_id]),
    )


def _find_contract(c):
    items = methodology.ContractItem.objects.filter(edition=c.edition).select_related(
        "contract_section"
    )
    return _matching(
        items,
        [c.column("term"), c.column("detail")],
        c,
        ["contract_section__position", "position", "pk"],
    )


def _show_contract(c, item):
    section = item.contract_section
    section_title = c.method_text(getattr(section, c.column("title")))
    return Shown(
        # An item without a term is a line of its section: the section names it.
        title=c.method_text(getattr(item, c.column("term"))) or section_title,
        bodies=(c.method_text(getattr(item, c.column("detail"))),),
        url=reverse("methodology:claim", args=[item.section_id]),
        tag=f"{section.number} {section_title}" if section.number else section_title,
    )


def _find_glossary(c):
    terms = glossary_list(c.edition)
    return _matching(terms, [c.column("term"), c.column("definition")], c, ["position", "pk"])


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
    return _matching(tasks, columns, c, ["family__position", "position", "slug"])


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


class _GroupConcat(Aggregate):
    """SQLite's GROUP_CONCAT(text, separator), the counterpart of PostgreSQL's STRING_AGG."""

    function = "GROUP_CONCAT"
    output_field = TextField()


@dataclass(frozen=True)
class PageTexts:
    """Texts a market page shows from rows of another model, and the section they are in."""

    column: str
    model: type
    # The path from a row of `model` to its market edition.
    link: str
    fields: tuple
    order: tuple
    anchor: str
    # Fields with one value for both languages (a platform's native name).
    untranslated: tuple = ()
    only: Q = Q()

    def joined(self, c):
        """One column holding `fields` of every row of the outer market edition.

        The texts are joined by PIECE (row after row, field after field), in page
        order on PostgreSQL; SQLite's GROUP_CONCAT keeps the order rows are read in.
        """
        names = [name if name in self.untranslated else c.column(name) for name in self.fields]
        pieces = [F(names[0])]
        for name in names[1:]:
            pieces += [Value(PIECE), F(name)]
        text = Concat(*pieces, output_field=TextField()) if len(pieces) > 1 else pieces[0]
        if connection.vendor == "postgresql":
            joined = StringAgg(text, delimiter=PIECE, order_by=self.order)
        else:
            joined = _GroupConcat(text, Value(PIECE))
        rows = (
            self.model.objects.filter(self.only, **{self.link: OuterRef("pk")})
            .order_by()
            .values(self.link)
            .annotate(joined=joined)
            .values("joined")
        )
        return Coalesce(Subquery(rows), Value(""), output_field=TextField())


# What a market page shows beyond its market edition's own columns, in page order.
MARKET_PAGE_TEXTS = [
    PageTexts(
        "page_hazards", Hazard, "market_edition", ("title", "detail"), ("position", "pk"), "hazards"
    ),
    PageTexts(
        "page_changes",
        LocalChange,
        "market_edition",
        ("text",),
        ("position", "pk"),
        "local-changes",
    ),
    PageTexts(
        "page_situations",
        IntegrationSituation,
        "market_edition",
        ("title", "detail", "capability_area"),
        ("position", "pk"),
        "integration-profile",
    ),
    PageTexts(
        "page_platforms",
        RepresentativePlatform,
        "registration__market_edition",
        ("name", "native_name", "local_reach", "availability", "relevance"),
        ("registration__task_family", "rank"),
        "platforms",
        untranslated=("native_name",),
        # The page shows every registration that has not been superseded.
        only=~Q(registration__status=RegistrationStatus.SUPERSEDED),
    ),
]
# The one-to-one records a market page shows: (relation, fields, section).
MARKET_PAGE_RECORDS = [
    (
        "datasheet",
        ("motivation", "composition", "collection", "intended_uses", "distribution", "maintenance"),
        "datasheet",
    ),
    (
        "data_statement",
        ("language_variety", "region", "channel_and_register", "reviewer_context"),
        "data-statement",
    ),
]


def _find_markets(c):
    market_editions = market_edition_list(c.edition).select_related(None).prefetch_related(None)
    if c.edition is None:
        # Without an edition the selector would fall back to the current one, which is none.
        return market_editions.none()
    page_texts = {texts.column: texts.joined(c) for texts in MARKET_PAGE_TEXTS}
    columns = [
        "market__" + c.column("name"),
        "market__native_name",
        "market__code",
        c.column("edition_note"),
        c.column("profile_summary"),
        *page_texts,
        *(
            f"{relation}__{c.column(name)}"
            for relation, names, _ in MARKET_PAGE_RECORDS
            for name in names
        ),
    ]
    market_editions = market_editions.select_related("market", "datasheet", "data_statement")
    return _matching(market_editions.annotate(**page_texts), columns, c, ["market__display_order"])


def _show_market(c, market_edition):
    market = market_edition.market
    name = getattr(market, c.column("name"))
    bodies, anchors = _market_page_bodies(c, market_edition)
    return Shown(
        title=f"{market.code} · {name}",
        bodies=bodies,
        anchors=anchors,
        url=reverse("markets:market-detail", args=[market.code.lower()]),
        also=(market.native_name,),
        # The native name is shown when it says something the reader's name does not.
        native=market.native_name if market.native_name != name else "",
        native_lang=market.native_lang,
    )


def _market_page_bodies(c, market_edition):
    """(texts, anchors): every searched text of a market page, with the section it is in."""
    texts = [
        (getattr(market_edition, c.column("profile_summary")), ""),
        (getattr(market_edition, c.column("edition_note")), ""),
    ]
    for page in MARKET_PAGE_TEXTS:
        pieces = (getattr(market_edition, page.column) or "").split(PIECE)
        texts += [(piece, page.anchor) for piece in pieces]
    for relation, names, anchor in MARKET_PAGE_RECORDS:
        record = getattr(market_edition, relation, None)
        if record is not None:
            texts += [(getattr(record, c.column(name)), anchor) for name in names]
    # A datasheet counts its records as the page does ("Four hazards").
    texts = [(datasheet_text(market_edition, text), anchor) for text, anchor in texts]
    shown = [(_plain(text), anchor) for text, anchor in texts if text]
    return tuple(text for text, _ in shown), tuple(anchor for _, anchor in shown)


KINDS = [
    Kind("claims", _("Claims and items"), _find_claims, _show_claim),
    Kind("chapters", _("Chapters"), _find_chapters, _show_chapter),
    Kind("contract", _("Operational contract"), _find_contract, _show_contract),
    Kind("glossary", _("Glossary"), _find_glossary, _show_glossary),
    Kind("tasks", _("Tasks"), _find_tasks, _show_task),
    Kind("markets", _("Markets"), _find_markets, _show_market),
]
