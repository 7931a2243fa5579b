"""A cell's verification and data status read the same on the pages as in the API:
the API gives the codes, the evidence pages the same values in the reader's words.
Seed 000: "Self-reported runs are displayed for transparency and never published as
official"; the earlier site's vocabularies (self-reported, provisional, independent
rerun; demo, preview, official) are the codes both use."""

import html
import json
import re

import pytest
from django.core.management import call_command
from django.utils import translation

from submissions.models import DataStatus, Verification
from tests.factories import api_auth, attempt_payload, independent_rerun, publishable_world

pytestmark = pytest.mark.django_db


def api_cells(client):
    cells = client.get("/api/v1/cells/").json()["results"]
    assert cells
    return cells


def figure(page, name):
    """The value of a cell page's figure row named `name`."""
    found = re.search(rf'<th scope="row">{re.escape(name)}</th><td>([^<]*)</td>', page)
    assert found, name
    return found.group(1)


def words(code, choices, language):
    with translation.override(language):
        return str(choices(code).label)


@pytest.mark.parametrize("prefix, language", [("", "en"), ("/ko", "ko")])
def test_the_evidence_pages_say_what_the_api_says_of_demo_runs(
    client, canonical_content, prefix, language
):
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    cells = api_cells(client)
    assert {c["data_status"] for c in cells} == {DataStatus.DEMO}
    listing = html.unescape(client.get(f"{prefix}/evidence/").text)
    for cell in cells:
        row = listing[listing.index(f"/evidence/{cell['cell']}/") :]
        row = row[: row.index("</tr>")]
        assert words(cell["verification"], Verification, language) in row
        assert words(cell["data_status"], DataStatus, language) in row
        page = html.unescape(client.get(f"{prefix}/evidence/{cell['cell']}/").text)
        assert words(cell["verification"], Verification, language) in page
        assert words(cell["data_status"], DataStatus, language) in page


def post(client, user, payload):
    response = client.post(
        "/api/v1/attempts/",
        json.dumps([payload]),
        content_type="application/json",
        **api_auth(user),
    )
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(
    "recorder, payload, verification",
    [
        ("staff", lambda: independent_rerun(1), Verification.INDEPENDENT_RERUN),
        ("operator", lambda: attempt_payload(), Verification.SELF_REPORTED),
    ],
)
def test_a_cell_reads_as_its_weakest_verification_on_its_page(
    client, request, canonical_content, recorder, payload, verification
):
    """An operator's own run is self-reported, MICA's rerun an independent one: the
    API's code and the page's words agree, in both languages."""
    publishable_world()
    post(client, request.getfixturevalue(recorder), payload())
    (cell,) = api_cells(client)
    assert cell["verification"] == verification
    for prefix, language in (("", "en"), ("/ko", "ko")):
        page = html.unescape(client.get(f"{prefix}/evidence/{cell['cell']}/").text)
        with translation.override(language):
            heading = translation.gettext("Verification")
        assert figure(page, heading) == words(verification, Verification, language)


def test_each_attempt_is_scored_on_the_page_as_the_api_receipt_says(client, operator):
    """Seed: "Ineligible runs are excluded with their reasons, never scored as zero." The
    receipt's `scored` and the cell page's word for each attempt agree."""
    publishable_world()
    ineligible = attempt_payload(
        attempt_id="acme-kr-002",
        eligible=False,
        ineligible_reason="The fixture was unreachable.",
    )
    response = client.post(
        "/api/v1/attempts/",
        json.dumps([attempt_payload(), ineligible]),
        content_type="application/json",
        **api_auth(operator),
    )
    assert response.status_code == 201, response.content
    receipt = {a["attempt_id"]: a["scored"] for a in response.json()["attempts"]}
    assert receipt == {"acme-kr-001": True, "acme-kr-002": False}
    (cell,) = api_cells(client)
    for prefix, language in (("", "en"), ("/ko", "ko")):
        page = html.unescape(client.get(f"{prefix}/evidence/{cell['cell']}/").text)
        with translation.override(language):
            said = {True: translation.gettext("scored"), False: translation.gettext("not scored")}
        for attempt_id, scored in receipt.items():
            line = page[page.index(f"<code>{attempt_id}</code>") :]
            line = line[: line.index("</li>")]
            # "not scored" holds "scored": the negative is the one a scored line lacks.
            assert said[scored] in line
            assert (said[False] in line) is not scored
