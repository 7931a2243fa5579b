"""schemathesis fuzzes the operations of the OpenAPI schema that are not GET (those that
write) against a live server; test_api_fuzz.py fuzzes the GET ones."""

import pytest

from tests.browser.test_api_fuzz import WRITES, assert_no_server_error

pytestmark = pytest.mark.browser


def test_no_operation_that_writes_answers_with_a_server_error(site, tmp_path):
    assert_no_server_error(site, tmp_path, WRITES)
