"""The methodology's references as CSL-JSON items, for reference managers and citeproc.

Pure: it reads the fields of the records it is given and nothing else. A reference
records a short label (`title`), the work's own title or a description (`subtitle`),
a free-text venue with a year ("ICLR 2024"), a URL and the cited work's bibliographic
data: its kind (`work_type`, a CSL type), its title where the label is not it
(`work_title`), its authors ("Family, Given", one a line) or the organisations it is
issued by, its issued date, where it appeared (`container_title`, `publisher`, volume,
issue, pages, number) and, for a living page, the date it was read (`accessed_on`).

A record without a kind of work (an edition loaded before the references carried
their bibliographic data) is read as before: type, container, year and, where the
label names them ("Keeney & Raiffa"), the authors come from the label, the venue and
the URL; nothing is invented.

The output validates against the official CSL-JSON input schema, a copy of which is
mica/exports/schemas/csl-data.json (citation-style-language/schema,
schemas/input/csl-data.json at 00412663cee29f630e8a112abf751fce6c9c1748).
"""

import datetime
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "csl-data.json"

# Venue names as the references write them; anything else falls back on what the
# venue's shape and the URL say.
CONFERENCES = frozenset({"AAAI", "ACL", "EMNLP", "ICLR", "ICML", "ISCA", "NAACL", "NeurIPS"})
JOURNALS = frozenset({"CACM", "Information Processing & Management", "JMLR", "TACL", "TMLR"})

_YEAR = re.compile(r"\b(19|20)\d{2}\b")
_ACCESSED = re.compile(r"accessed (\d{1,2}) ([A-Z][a-z]+) (\d{4})")
_MONTHS = {
    name: number
    for number, name in enumerate(
        [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ],
        start=1,
    )
}
_ET_AL = re.compile(r"^(?P<names>[A-Z][\w'-]+ et al\.)(?:\s*\((?P<short>[^)]+)\))?$")
_PAIR = re.compile(r"^(?P<a>[A-Z][\w'-]+) & (?P<b>[A-Z][\w'-]+)$")
_INSTITUTIONS = re.compile(r"^(?P<a>[A-Z]{2,}) / (?P<b>[A-Z]{2,})$")
_DOI_PREFIX = "https://doi.org/"


def csl_items(references: Iterable) -> list[dict]:
    """One CSL-JSON item per reference, in the order given.

    references: `methodology.Reference` records (or mappings with the same field names:
        key, section_id, title_en, title_ko, subtitle_en, venue_en, url, accessed_on).
    Each item has the reference key as its id. Titles and venues keep their original
    wording in both languages, so the English fields are read; a Korean title that
    differs is kept as the translated title.
    """
    return [csl_item(reference) for reference in references]


def csl_item(reference) -> dict:
    if _get(reference, "work_type"):
        item = _recorded_item(reference)
    else:
        item = _derived_item(reference)
    title = _get(reference, "title_en") or _get(reference, "title") or ""
    title_ko = _get(reference, "title_ko") or ""
    if title_ko and title_ko != title:
        item["translated-title"] = title_ko
    url = _get(reference, "url") or ""
    if url:
        item["URL"] = url
        if url.startswith(_DOI_PREFIX):
            item["DOI"] = url[len(_DOI_PREFIX) :]
    item["language"] = "en"
    section_id = _get(reference, "section_id")
    if section_id:
        item["custom"] = {"section_id": section_id}
    return item


# The record's fields that are CSL variables of the same meaning, as they are.
_RECORDED_VARIABLES = {
    "container_title": "container-title",
    "publisher": "publisher",
    "volume": "volume",
    "issue": "issue",
    "page": "page",
    "number": "number",
}


def _recorded_item(reference) -> dict:
    """The item from the work's own bibliographic data, as the record holds it."""
    item = {"id": _get(reference, "key"), "type": _get(reference, "work_type")}
    item["title"], short = _work_title(reference)
    if short:
        item["title-short"] = short
    names = [_person(line) for line in _lines(reference, "authors")]
    names += [{"literal": line} for line in _lines(reference, "organisation_authors")]
    if names:
        item["author"] = names
    issued = _date_parts(_get(reference, "issued"))
    if issued:
        item["issued"] = {"date-parts": [issued]}
    for field, variable in _RECORDED_VARIABLES.items():
        value = _get(reference, field)
        if value:
            item[variable] = value
    accessed = _accessed(reference, _get(reference, "venue_en") or "")
    if accessed:
        item["accessed"] = {"date-parts": [accessed]}
    return item


def _work_title(reference):
    """(the work's title, a short title or None) for a record with bibliographic data.

    The label is a short name ("WebArena") or, for some works, the authors ("Keeney &
    Raiffa"); the subtitle completes the label ("A Realistic Web Environment ...") or
    is the whole title. A title the two do not make is recorded as work_title.
    """
    label = _get(reference, "title_en") or _get(reference, "title") or ""
    subtitle = _get(reference, "subtitle_en") or ""
    work_title = _get(reference, "work_title")
    if work_title:
        return work_title, None
    if not subtitle:
        return label, None
    if _authors(label)[0] or subtitle.startswith(label):
        return subtitle, None
    return f"{label}: {subtitle}", label


def _lines(reference, field):
    return [line.strip() for line in (_get(reference, field) or "").splitlines() if line.strip()]


def _person(line):
    """{"family": "Zhou", "given": "Shuyan"} from "Zhou, Shuyan"; a single name is a family."""
    family, _comma, given = line.partition(",")
    name = {"family": family.strip()}
    if given.strip():
        name["given"] = given.strip()
    return name


def _date_parts(issued):
    """[2024, 8, 11] from "2024-08-11"; [2024] from "2024"."""
    if not issued:
        return None
    return [int(part) for part in str(issued).split("-")]


def _derived_item(reference) -> dict:
    """The item read from the label, the venue and the URL (no bibliographic data)."""
    title = _get(reference, "title_en") or _get(reference, "title") or ""
    subtitle = _get(reference, "subtitle_en") or ""
    venue = _get(reference, "venue_en") or ""
    url = _get(reference, "url") or ""

    kind, container, issued = _read_venue(venue, url)
    item = {"id": _get(reference, "key"), "type": kind}

    authors, short = _authors(title)
    if authors:
        item["author"] = authors
        item["title"] = subtitle or title
        if short:
            item["title-short"] = short
    elif kind == "webpage" and _is_documentation(venue):
        # "LINE Developers" + "Sending messages": a page of a site.
        item["title"] = subtitle or title
        item["container-title"] = title
    elif kind == "webpage":
        item["title"] = title
        if subtitle:
            item["abstract"] = subtitle
    elif subtitle and not subtitle.startswith(title):
        item["title"] = f"{title}: {subtitle}"
        item["title-short"] = title
    else:
        # "MLPerf Inference" + "MLPerf Inference Benchmark": the subtitle is the title.
        item["title"] = subtitle or title

    if container:
        key = "publisher" if kind in {"book", "report", "article"} else "container-title"
        item.setdefault(key, container)
    if issued:
        item["issued"] = {"date-parts": [issued]}
    accessed = _accessed(reference, venue)
    if accessed:
        item["accessed"] = {"date-parts": [accessed]}
    return item


def _get(record, name):
    if isinstance(record, Mapping):
        return record.get(name)
    return getattr(record, name, None)


def _is_documentation(venue):
    return "documentation" in venue.lower()


def _read_venue(venue, url):
    """(CSL type, container or publisher, [year]) from the venue text and the URL."""
    is_arxiv = "arxiv.org/" in url
    if not venue:
        return "webpage", None, None
    if _is_documentation(venue):
        return "webpage", None, None
    parts = [_venue_part(part) for part in re.split(r"\s+/\s+", venue)]
    for name, year in parts:
        if name in CONFERENCES:
            return "paper-conference", name, year
        if name in JOURNALS:
            return "article-journal", name, year
    name, year = parts[0]
    if name.endswith(" edition") and "Press" in name:
        return "book", name.removesuffix(" edition"), year
    if is_arxiv and (not name or name == "arXiv"):
        return "article", "arXiv", year
    if name and year:
        # "NIST, 2023": an institution's own publication.
        return "report", name, year
    if year:
        return "document", None, year
    return "webpage", None, None


def _venue_part(part):
    """("ICLR", [2024]) from "ICLR 2024"; the name is what precedes the first year."""
    match = _YEAR.search(part)
    if not match:
        return part.strip(), None
    name = part[: match.start()].strip().rstrip(",").strip()
    return name, [int(match.group(0))]


def _authors(title):
    """The author list a label such as "Keeney & Raiffa" names, and a short title."""
    match = _ET_AL.match(title)
    if match:
        # CSL has no "et al." marker: the label is kept whole rather than
        # presenting the first author as the only one.
        return [{"literal": match["names"]}], match["short"]
    match = _PAIR.match(title)
    if match:
        return [{"family": match["a"]}, {"family": match["b"]}], None
    match = _INSTITUTIONS.match(title)
    if match:
        return [{"literal": match["a"]}, {"literal": match["b"]}], None
    return None, None


def _accessed(reference, venue):
    accessed_on = _get(reference, "accessed_on")
    if isinstance(accessed_on, datetime.date):
        return [accessed_on.year, accessed_on.month, accessed_on.day]
    match = _ACCESSED.search(venue)
    if match and match[2] in _MONTHS:
        return [int(match[3]), _MONTHS[match[2]], int(match[1])]
    return None
