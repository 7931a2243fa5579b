"""The cells API publishes what its discard rate is counted from (issue 44, item 7).

Finding: "`/api/v1/cells/` publishes the attempts, ineligible and invalid runs behind the
discard rate" was missing: the rate was given without the counts it divides. Seed:
"task-level results are published so the analysis can be redone independently"."""

import json

import pytest

from mica.site.api_docs import api_schema
from tests.factories import api_auth, attempt_payload

pytestmark = pytest.mark.django_db


def test_each_cell_gives_the_counts_behind_its_discard_rate(client, operator):
    batch = [
        attempt_payload(),
        # A model the snapshot does not declare: kept, never scored (an invalid run).
        attempt_payload(
            attempt_id="acme-kr-002",
            redacted_trace_id="trace-002",
            invocations=[
                {
                    **attempt_payload()["invocations"][0],
                    "model": "undeclared-x",
                    "cost_usd": "0.030000000",
                }
            ],
        ),
    ]
    answer = client.post(
        "/api/v1/attempts/",
        json.dumps(batch),
        content_type="application/json",
        **api_auth(operator),
    )
    assert answer.status_code == 201, answer.json()
    [cell] = client.get("/api/v1/cells/").json()["results"]
    assert cell["attempts"] == 2
    assert cell["eligible_runs"] + cell["ineligible_runs"] + cell["invalid_runs"] == 2
    assert cell["invalid_runs"] == 1
    assert cell["discard_rate"] == pytest.approx(100 * cell["ineligible_runs"] / cell["attempts"])
    schema = api_schema()["components"]["schemas"]["Cell"]["properties"]
    assert {"attempts", "ineligible_runs", "invalid_runs"} <= set(schema)
