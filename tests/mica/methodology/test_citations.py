"""Claims cite their references by author and year, linked to the entry (issue 34, item
4: "claims cite references as readers expect (author and year, linked), not as slugs").
The Markdown pack keeps the seed's own "(see: agarwal-statistical)"; the page is for
readers."""

import re

import pytest

from mica.methodology.presenters import citation_label

pytestmark = pytest.mark.django_db


def refs_of(page):
    return re.findall(r'<span class="refs">\((.*?)\)</span>', page, re.S)


@pytest.mark.parametrize(
    "prefix, cited",
    [
        ("", ["Agarwal et al., 2021", "Keeney and Raiffa, 1993"]),
        ("/ko", ["Agarwal 외(2021)", "Keeney·Raiffa(1993)"]),
    ],
)
def test_claims_cite_author_and_year_linked_to_the_reference(
    client, canonical_content, prefix, cited
):
    page = client.get(f"{prefix}/methodology/").text
    refs = re.sub(r"</?span[^>]*>", "", "\n".join(refs_of(page)))
    assert cited[0] in refs and cited[1] in refs
    assert 'href="#ref-agarwal-statistical">Agarwal' in refs
    assert '<span translate="no">Agarwal</span>' in page
    assert ">agarwal-statistical<" not in refs and ">keeney-raiffa<" not in refs


def test_a_citation_follows_the_number_of_authors_and_says_when_undated():
    def label(names, year):
        return re.sub(r"</?span[^>]*>", "", citation_label(names, year))

    assert label(["Lee"], "2020") == "Lee, 2020"
    assert label(["Lee", "Kim"], "2020") == "Lee and Kim, 2020"
    assert label(["Lee", "Kim", "Park"], None) == "Lee et al., n.d."
    assert label(["Kakao Corp."], None) == "Kakao Corp., n.d."
    assert citation_label(["O'Neil & Co"], "2020").startswith('<span translate="no">O&#x27;Neil')
