"""The methodology's records in the reader's language, with live figures filled in."""

import nh3
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from markdown_it import MarkdownIt

from mica.methodology.pack import contract_by_chapter, fill_placeholders, numbered_in

_MARKDOWN = MarkdownIt("commonmark", {"html": True})
_ALLOWED_TAGS = {"a", "code", "em", "strong", "dfn", "br"}


class Reader:
    """Picks a language, fills placeholders and renders inline Markdown to safe HTML."""

    def __init__(self, language, facts):
        self.language = language
        self.facts = facts.get(language, facts)

    def plain(self, text):
        if isinstance(text, dict):
            text = text.get(self.language) or text.get("en", "")
        return fill_placeholders(text or "", self.facts)

    def html(self, text):
        rendered = _MARKDOWN.renderInline(self.plain(text))
        return mark_safe(nh3.clean(rendered, tags=_ALLOWED_TAGS, attributes={"a": {"href"}}))


# A status line whose state the records settle: the publication thresholds are planned
# until the edition states all four, and then the line says what is in force.
STATE_FROM_RECORDS = {"status-thresholds": "thresholds_set"}


def _state(reader, item):
    condition = STATE_FROM_RECORDS.get(item["section_id"])
    if item.get("type") == "status" and condition and reader.facts.get(condition) is True:
        return "implemented"
    return item.get("state")


def _item(reader, item, kinds, references):
    return {
        "section_id": item["section_id"],
        "type": item["type"],
        "kind": kinds.get(item.get("kind")),
        "state": _state(reader, item),
        "term": reader.html(item["term"]),
        "detail": reader.html(item["detail"]),
        "refs": [references[key] for key in item.get("refs", []) if key in references],
        "link": item.get("link"),
        "link_label": reader.plain(item.get("link_label")) if item.get("link_label") else "",
        "corrections": [
            {"date": c["date"], "text": reader.html(c["text"])} for c in item.get("corrections", [])
        ],
    }


def _section(reader, section):
    """A subsection of the contract as the page shows it: label, number, title, lead, items."""
    return {
        "section_id": section["section_id"],
        "number": section.get("number"),
        "eyebrow": reader.plain(section["eyebrow"]) if section.get("eyebrow") else "",
        "title": reader.plain(section["title"]),
        "lead": reader.html(section.get("lead") or ""),
        "numbered": numbered_in(section, reader.language),
        "items": [
            {
                "section_id": i["section_id"],
                "term": reader.plain(i["term"]) if i.get("term") else "",
                "detail": reader.html(i["detail"]),
            }
            for i in section["items"]
        ],
    }


def _header(reader, pack):
    """Seed 001's page header: "방법론 초안", the title, three lead sentences, the figures."""
    header = pack.get("header")
    if not header:
        return None
    title, figures = reader.plain(header["title"]), reader.plain(header["figures"])
    return {
        "eyebrow": reader.plain(header["eyebrow"]),
        "title": title,
        "lead": reader.html(header["lead"]),
        "figures": figures,
        "download_label": reader.plain(header["download_label"]),
        "download_note": reader.plain(header["download_note"]),
        # The page's meta description: what it is about, and its live figures.
        "description": f"{title}. {figures}",
    }


def _colophon(reader, pack):
    """Chapter 20's lines: the reference count and the link to who decides."""
    colophon = pack.get("colophon")
    if not colophon:
        return None
    return {
        "references": reader.plain(colophon["references"]),
        "governance_label": reader.plain(colophon["governance"]["label"]),
        "governance_link": colophon["governance"]["link"],
    }


def _labels(reader, pack):
    labels = pack.get("labels", {})
    return {name: reader.plain(labels[name]) for name in labels if isinstance(labels[name], dict)}


def _citation_key(names, year):
    """What a citation prints of its authors and year: two works alike here are told apart
    by a letter after the year ("Kakao Corp., n.d.-a", "Kakao Corp., n.d.-b")."""
    lead = tuple(names) if len(names) <= 2 else (names[0], "et al.")
    return lead, year


def citation_suffixes(citations, order):
    """{key: "a" | "b" | …} of the references whose citation (authors and year) another
    reference shares, lettered in the order the references are listed; others have none."""
    alike = {}
    for key in order:
        if key in citations:
            alike.setdefault(_citation_key(*citations[key]), []).append(key)
    return {
        key: "abcdefghijklmnopqrstuvwxyz"[index]
        for keys in alike.values()
        if len(keys) > 1
        for index, key in enumerate(keys[:26])
    }


def citation_label(names, year, suffix=""):
    """A reference as a reader expects it cited in the text: author and year ("Agarwal
    et al., 2021", "Keeney and Raiffa, 1993"), in the reader's language, with `suffix`
    ("a", "b") where another cited work has the same authors and year. The names are
    names in any language: marked translate="no", as a Korean page keeps them."""
    names = [format_html('<span translate="no">{}</span>', name) for name in names]
    if len(names) > 2:
        lead = _("%(first)s et al.") % {"first": names[0]}
    elif len(names) == 2:
        lead = _("%(first)s and %(second)s") % {"first": names[0], "second": names[1]}
    else:
        lead = names[0] if names else ""
    if year:
        year = f"{year}{suffix}"
    elif suffix:
        year = _("n.d.-%(letter)s") % {"letter": suffix}
    else:
        year = _("n.d.")
    return mark_safe(_("%(names)s, %(year)s") % {"names": lead, "year": year})


def methodology_view(content, facts, language, citations=None):
    reader = Reader(language, facts)
    citations = citations or {}
    separator = reader.plain(content["pack"].get("labels", {}).get("reference_separator")) or ": "
    suffixes = citation_suffixes(citations, [r["key"] for r in content["references"]])
    kinds = {
        k["kind"]: {
            "code": k["kind"],
            "label": reader.plain(k["label"]),
            "definition": reader.html(k["definition"]),
            "section_id": k["section_id"],
        }
        for k in content["vocabulary"]["kinds"]
    }
    references = {
        r["key"]: {
            "key": r["key"],
            "section_id": r["section_id"],
            "title": reader.plain(r["title"]),
            "citation": citation_label(*citations[r["key"]], suffixes.get(r["key"], ""))
            if r["key"] in citations
            else reader.plain(r["title"]),
            "names": citations[r["key"]][0] if r["key"] in citations else [],
        }
        for r in content["references"]
    }
    groups = [
        {
            "section_id": g["section_id"],
            "chapter": g["chapter"],
            "title": reader.plain(g.get("title")) if g.get("title") else "",
            "intro": reader.html(g["intro"]) if g.get("intro") else "",
            "references": [
                {**_reference(reader, r, separator), "cite_as": _cite_as(references[r["key"]])}
                for r in content["references"]
                if r["group"] == g["section_id"]
            ],
        }
        for g in content["reference_groups"]
    ]
    placed, unplaced = contract_by_chapter(content)
    sections = {s["section_id"]: _section(reader, s) for s in content["contract"]["sections"]}
    chapters = [
        {
            "number": c["number"],
            "section_id": c["section_id"],
            "title": reader.plain(c["title"]),
            "lead": reader.html(c["lead"]),
            "body": c.get("body", "items"),
            "items": [_item(reader, i, kinds, references) for i in c.get("items", [])],
            "groups": [g for g in groups if g["chapter"] == c["section_id"]],
            # Its subsections after its own items, as seed 001 places "3.1 공개 규칙".
            "sections": [sections[s["section_id"]] for s in placed.get(c["number"], [])],
        }
        for c in content["chapters"]
    ]
    pack = content["pack"]
    return {
        "title": reader.plain(pack.get("title", "")),
        "header": _header(reader, pack),
        "intro": reader.html(pack.get("intro", "")),
        "labels": _labels(reader, pack),
        "colophon": _colophon(reader, pack),
        "status_heading": reader.plain(pack.get("status", {}).get("heading", "")),
        "status": [reader.html(line["text"]) for line in pack.get("status", {}).get("lines", [])],
        "vocabulary_heading": reader.plain(content["vocabulary"]["heading"]),
        "kinds": list(kinds.values()),
        "chapters": chapters,
        "glossary": [
            {
                "section_id": g["section_id"],
                "term": reader.plain(g["term"]),
                "definition": reader.html(g["definition"]),
            }
            for g in content["glossary"]
        ],
        "register": [
            {
                "section_id": p["section_id"],
                "term": reader.plain(p["term"]),
                "detail": reader.html(p["detail"]),
            }
            for p in content["policy_register"]
        ],
        "contract_heading": reader.plain(content["contract"]["heading"]),
        # Every subsection (claim permalinks find theirs here) and those no chapter holds.
        "contract": list(sections.values()),
        "contract_unplaced": [sections[s["section_id"]] for s in unplaced],
    }


def _cite_as(reference):
    """How the claims cite a listed work ("Zhou et al., 2024"), so that its entry names
    its authors; none where the entry's own label already does ("Agarwal et al.")."""
    names = reference.get("names") or []
    if not names or reference["title"].startswith(names[0]):
        return ""
    citation = reference["citation"]
    # One full stop closes it: "Kakao Corp., n.d." ends with its own.
    return citation if citation.endswith(".") else format_html("{}.", citation)


def _reference(reader, ref, separator):
    return {
        "key": ref["key"],
        "section_id": ref["section_id"],
        "url": ref["url"],
        "title": reader.plain(ref["title"]),
        "subtitle": reader.plain(ref["subtitle"]) if ref.get("subtitle") else "",
        # A label that closes on a full stop ("Agarwal et al.") takes the pack's separator
        # (" — " in English; seed 001 prints "Agarwal et al.: …", so Korean keeps its colon).
        "subtitle_separator": separator if reader.plain(ref["title"]).endswith(".") else ": ",
        "venue": reader.plain(ref["venue"]) if ref.get("venue") else "",
        "borrowed": reader.html(ref["borrowed"]) if ref.get("borrowed") else "",
        "not_adopted": reader.html(ref["not_adopted"]) if ref.get("not_adopted") else "",
        "note": reader.html(ref["note"]) if ref.get("note") else "",
    }
