"""Labels as the method says (issue 41, item 3).

Seed 000: "Verification. Independent rerun only. Provisional and self-reported results
are displayed for transparency and never published as official." and "Data status.
Demo and preview data can never be publication eligible."

The finding: `/systems/<slug>/` said "Data status Official" and `/evidence/` "Self-reported
· Official" for an operator's own runs; the API said `"data_status": "official"` with
nothing beside it. "Official" is an independent rerun in a cell that passed the gate.
"""

import html
import json

import pytest
from django.utils import translation

from governance.models import Standing
from submissions.models import SystemSnapshot
from tests.factories import api_auth, attempt_payload, independent_rerun, publishable_world

pytestmark = pytest.mark.django_db


def post(client, user, payloads):
    response = client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )
    assert response.status_code == 201, response.content


def the_cell(client):
    (cell,) = client.get("/api/v1/cells/").json()["results"]
    return cell


def label(standing, language):
    with translation.override(language):
        return str(Standing(standing).label)


def pages(client, cell):
    system = SystemSnapshot.objects.get().system.slug
    for prefix, language in (("", "en"), ("/ko", "ko")):
        for path in ("/evidence/", f"/evidence/{cell['cell']}/", f"/systems/{system}/"):
            response = client.get(f"{prefix}{path}")
            assert response.status_code == 200, path
            yield language, path, html.unescape(response.text)


def test_a_self_reported_cell_reads_official_nowhere(client, operator):
    """An operator's own runs, in a cell that meets every threshold but the rerun: the
    pages in both languages, the API and the exports say self-reported, never official."""
    publishable_world()
    post(client, operator, [attempt_payload(), attempt_payload(attempt_id="acme-kr-002")])
    cell = the_cell(client)
    assert cell["verification"] == "self-reported"
    assert cell["standing"] == Standing.SELF_REPORTED
    assert cell["standing_sentence"] == {
        "en": label(Standing.SELF_REPORTED, "en"),
        "ko": label(Standing.SELF_REPORTED, "ko"),
    }
    for language, path, page in pages(client, cell):
        # The old label, as a word of its own: the data status "Official" / "공식".
        assert "Official" not in page, path
        assert ">공식<" not in page, path
        assert label(Standing.OFFICIAL, language) not in page, path
        if path.startswith("/evidence/"):
            assert label(Standing.SELF_REPORTED, language) in page, path


def test_only_an_independent_rerun_that_passed_reads_official(client, staff):
    publishable_world()
    post(client, staff, [independent_rerun(1), independent_rerun(2)])
    cell = the_cell(client)
    assert cell["publication_eligible"] is True
    assert cell["standing"] == Standing.OFFICIAL
    for language, path, page in pages(client, cell):
        if path.startswith("/evidence/"):
            assert label(Standing.OFFICIAL, language) in page, path


def test_an_independent_rerun_the_gate_withholds_is_not_official(client, staff):
    """One run where the thresholds ask for two: the gate refuses, and the standing says
    the rerun is withheld, not official."""
    publishable_world()
    post(client, staff, [independent_rerun(1)])
    cell = the_cell(client)
    assert cell["publication_eligible"] is False
    assert cell["standing"] == Standing.WITHHELD
    for language, path, page in pages(client, cell):
        assert label(Standing.OFFICIAL, language) not in page, path
