import copy

import pytest
from rest_framework.authtoken.models import Token


def auth(user):
    token, _ = Token.objects.get_or_create(user=user)
    return {"HTTP_AUTHORIZATION": f"Token {token.key}"}


BASE = {
    "attempt_id": "acme-kr-001",
    "snapshot": {"system": "acme-agent", "version": "2.1"},
    "task": "ec-reschedule-three-party",
    "task_version": "1.0.0",
    "market": "KR",
    "situations": ["kr-super-app-signed-in-flow"],
    "verification": "self-reported",
    "outcome": "confirmed-success",
    "accuracy": 1,
    "wall_clock_seconds": 300.0,
    "model_cost_usd": "0.030000000",
    "tool_cost_usd": "0.005000000",
    "observed_cost_usd": "0.035000000",
    "tools_used": ["browser"],
    "redacted_trace_id": "trace-001",
    "invocations": [
        {
            "order": 1,
            "provider": "openai",
            "model": "gpt-x",
            "model_version": "2026-10",
            "purpose": "plan",
            "input_tokens": 1200,
            "output_tokens": 300,
            "latency_seconds": 4.5,
            "cost_usd": "0.020000000",
        },
        {
            "order": 2,
            "provider": "local",
            "model": "router",
            "model_version": "1",
            "purpose": "route",
            "input_tokens": 200,
            "output_tokens": 20,
            "latency_seconds": 0.4,
            "cost_usd": "0.010000000",
        },
    ],
    "evidence": [
        {"evidence_id": "ev-1", "evidence_type": "post-action-readback", "sha256": "a" * 64}
    ],
}


@pytest.fixture
def payload():
    return copy.deepcopy(BASE)
