"""Issue 17, "citation validation messages are lost in API errors": a refused challenge
names each bad citation by its path, with the citation's own message. Issue 19: "one
error message reads literally `non_field_errors`": a refusal of a whole citation is keyed
by the citation's own path."""

import json

import pytest

from submissions.models import Challenge
from tests.factories import challenge_payload

pytestmark = pytest.mark.django_db

SOUND = {"source": "https://example.org/paper", "accessed": "2026-11-20"}


@pytest.mark.parametrize(
    "citations, errors",
    [
        (
            [SOUND, {"source": "ftp://example.org/paper", "accessed": "2026-11-20"}],
            {"citations.1.source": ["Give a URL (https://…) or a DOI (10.…)."]},
        ),
        (
            [{"source": "https://example.org/paper", "accessed": "last week"}],
            {
                "citations.0.accessed": [
                    "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
                ]
            },
        ),
        (
            [{"accessed": "2026-11-20"}, "https://example.org"],
            {
                "citations.0.source": ["This field is required."],
                "citations.1": ["Invalid data. Expected a dictionary, but got str."],
            },
        ),
        (
            "https://example.org",
            {"citations": ['Expected a list of items but got type "str".']},
        ),
    ],
)
def test_a_bad_citation_is_named_with_its_own_message(client, canonical_content, citations, errors):
    response = client.post(
        "/api/v1/challenges/",
        json.dumps(challenge_payload(citations=citations)),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "The challenge was not filed.", "errors": errors}
    assert not Challenge.objects.exists()
