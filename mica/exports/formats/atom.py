"""An Atom 1.0 feed (RFC 4287), written as a stream.

Pure: the caller gives the feed's metadata and an iterable of entry dicts, and every
entry is written as it arrives, so a long history of corrections and decisions never
sits in memory as one string. Text goes through XMLGenerator, which escapes markup
characters; characters XML 1.0 cannot carry at all are dropped.
"""

import datetime
import re
from collections.abc import Iterable, Mapping
from xml.sax.saxutils import XMLGenerator

ATOM_NS = "http://www.w3.org/2005/Atom"
XML_LANG = "xml:lang"

# C0 controls other than tab, newline and carriage return, lone surrogates and the two
# non-characters: XML 1.0 has no way to write them, escaped or not.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def write_atom(
    fh,
    *,
    feed_id: str,
    title: str,
    updated,
    site_url: str,
    entries: Iterable[Mapping],
    self_url: str | None = None,
    author: str = "MICA",
    lang: str | None = None,
    subtitle: str | None = None,
) -> int:
    """Write an Atom feed to `fh` and return the number of entries written.

    fh: a binary file, or a text file opened with UTF-8 encoding.
    feed_id: a permanent IRI for the feed (e.g. "tag:…" or the feed's own URL).
    updated: when the feed last changed, as an aware datetime (a naive one is taken as
        UTC), a date, or an RFC 3339 string.
    site_url: the page the feed is the companion of (the feed's alternate link).
    entries: dicts with "id", "title", "updated" (as for the feed) and optionally
        "link" (absolute URL), "summary" and "content" (plain text), "published",
        "lang" (a BCP 47 tag set as xml:lang on the entry) and "author".
    self_url: the feed's own URL, linked as rel="self" when given.
    author: the feed's author; Atom needs one unless every entry names its own.
    lang: xml:lang of the whole feed.
    """
    xml = XMLGenerator(fh, encoding="utf-8", short_empty_elements=True)
    xml.startDocument()
    feed_attrs = {"xmlns": ATOM_NS}
    if lang:
        feed_attrs[XML_LANG] = lang
    xml.startElement("feed", feed_attrs)
    _newline(xml)
    _text_element(xml, "id", feed_id)
    _text_element(xml, "title", title)
    if subtitle:
        _text_element(xml, "subtitle", subtitle)
    _text_element(xml, "updated", atom_date(updated))
    _link(xml, site_url, "alternate")
    if self_url:
        _link(xml, self_url, "self", "application/atom+xml")
    _author(xml, author)
    count = 0
    for entry in entries:
        _entry(xml, entry)
        count += 1
    xml.endElement("feed")
    xml.characters("\n")
    xml.endDocument()
    return count


def atom_date(value) -> str:
    """An RFC 3339 timestamp in UTC, as Atom's date constructs require."""
    if isinstance(value, str):
        return value
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, datetime.date):
        return f"{value.isoformat()}T00:00:00Z"
    raise TypeError(f"not a date: {value!r}")


def _entry(xml, entry):
    attrs = {XML_LANG: entry["lang"]} if entry.get("lang") else {}
    xml.characters("  ")
    xml.startElement("entry", attrs)
    _newline(xml)
    _text_element(xml, "id", entry["id"], indent=4)
    _text_element(xml, "title", entry["title"], {"type": "text"}, indent=4)
    _text_element(xml, "updated", atom_date(entry["updated"]), indent=4)
    if entry.get("published"):
        _text_element(xml, "published", atom_date(entry["published"]), indent=4)
    if entry.get("link"):
        _link(xml, entry["link"], "alternate", indent=4)
    if entry.get("author"):
        _author(xml, entry["author"], indent=4)
    if entry.get("summary"):
        _text_element(xml, "summary", entry["summary"], {"type": "text"}, indent=4)
    if entry.get("content"):
        _text_element(xml, "content", entry["content"], {"type": "text"}, indent=4)
    xml.characters("  ")
    xml.endElement("entry")
    _newline(xml)


def _clean(text):
    return _NOT_XML.sub("", str(text))


def _newline(xml):
    xml.characters("\n")


def _text_element(xml, name, text, attrs=None, *, indent=2):
    xml.characters(" " * indent)
    xml.startElement(name, attrs or {})
    xml.characters(_clean(text))
    xml.endElement(name)
    _newline(xml)


def _link(xml, href, rel, media_type=None, *, indent=2):
    attrs = {"rel": rel, "href": _clean(href)}
    if media_type:
        attrs["type"] = media_type
    xml.characters(" " * indent)
    xml.startElement("link", attrs)
    xml.endElement("link")
    _newline(xml)


def _author(xml, name, *, indent=2):
    xml.characters(" " * indent)
    xml.startElement("author", {})
    xml.startElement("name", {})
    xml.characters(_clean(name))
    xml.endElement("name")
    xml.endElement("author")
    _newline(xml)
