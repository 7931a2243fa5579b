"""What a CI run ran: per layer the tests passed, failed and skipped, then the slowest
tests of the whole run, read from the layers' JUnit reports (.ci/run).

    python tools/ci_summary.py REPORT.xml...

Exits non-zero when no test ran at all (pytest's "no tests" is a failure too).
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SLOWEST = 15


def _suites(path):
    root = ET.parse(path).getroot()
    return [root] if root.tag == "testsuite" else list(root)


def _counts(suites):
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return total - failed - skipped, failed, skipped


def _timings(layer, suites):
    for suite in suites:
        for case in suite.iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            yield float(case.get("time", 0)), layer, name


def main(paths):
    ran = 0
    timings = []
    for path in map(Path, paths):
        suites = _suites(path)
        passed, failed, skipped = _counts(suites)
        ran += passed + failed
        print(f"{path.stem}: {passed} passed, {failed} failed, {skipped} skipped")
        timings += _timings(path.stem, suites)
    print(f"\nthe slowest {SLOWEST} tests of the run (seconds, layer, test):")
    for seconds, layer, name in sorted(timings, reverse=True)[:SLOWEST]:
        print(f"{seconds:8.1f}  {layer:<11} {name}")
    if ran == 0:
        sys.exit("no test ran")


if __name__ == "__main__":
    main(sys.argv[1:])
