"""Helpers the test modules share (fixtures live in the conftest files)."""

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def require(condition, reason):
    """Skip (locally) or fail (in CI) when a real component is missing."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"CI needs this component: {reason}", pytrace=False)
    pytest.skip(reason)
