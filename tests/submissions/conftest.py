import pytest

from tests.factories import attempt_payload


@pytest.fixture
def payload():
    return attempt_payload()
