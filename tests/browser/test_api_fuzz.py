"""schemathesis fuzzes every operation of the OpenAPI schema against a live server.

The run is split in two halves of about a minute each, so two test processes share
it: this module fuzzes the operations that read (GET), test_api_fuzz_writes.py every
other one. One includes the method GET and the other excludes exactly it, so between
them they fuzz every operation, each with the same examples as one run would.
"""

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.request import urlopen

import pytest

pytestmark = pytest.mark.browser

# schemathesis's filter options, and which methods they select.
READS = (["--include-method", "GET"], lambda method: method == "GET")
WRITES = (["--exclude-method", "GET"], lambda method: method != "GET")
METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}


def schema_methods(site):
    """The method of every operation the schema documents."""
    with urlopen(f"{site}/api/schema/?format=json") as answer:
        paths = json.load(answer)["paths"]
    return [key.upper() for operations in paths.values() for key in operations if key in METHODS]


def assert_no_server_error(site, tmp_path, half):
    """Fuzz every operation of one half (READS or WRITES), and no other."""
    selection, selects = half
    schemathesis = Path(sys.executable).with_name("schemathesis")
    result = subprocess.run(
        [
            str(schemathesis),
            "run",
            f"{site}/api/schema/",
            *selection,
            "--checks",
            "not_a_server_error",
            "--workers",
            "1",
            "--max-examples",
            "50",
            "--phases",
            "examples,coverage,fuzzing",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    # The only finding that fails the run is a server error: a malformed request that the
    # test server's own HTTP parser refuses (a "network error") is not an answer of ours.
    assert "Server error" not in result.stdout, result.stdout[-6000:]
    assert not re.search(r"\[5\d\d\]", result.stdout), result.stdout[-6000:]
    selected = re.search(r"Selected: (\d+)/(\d+)", result.stdout)
    tested = re.search(r"Tested: (\d+)", result.stdout)
    assert selected and tested, result.stdout
    methods = schema_methods(site)
    assert int(selected.group(2)) == len(methods), result.stdout
    assert int(selected.group(1)) == len([m for m in methods if selects(m)]) >= 1, result.stdout
    assert int(tested.group(1)) == int(selected.group(1)), "every operation was fuzzed"


def test_no_operation_that_reads_answers_with_a_server_error(site, tmp_path):
    assert_no_server_error(site, tmp_path, READS)
