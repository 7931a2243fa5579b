"""Which tests PostgreSQL changes: the rule behind the `vendor` marker, checked.

The PostgreSQL layer of CI runs only what PostgreSQL changes (docs/setup.md,
"Which layer a test belongs in"). A test that reaches code branching on the database
(`connection.vendor`) checks something that is done differently there, so it must
carry `vendor` (or `postgres`) to be run there too. On SQLite this plugin watches every
read of the vendor made from the project's code or the tests' own, and a test that
made one without either marker fails, naming where the branch is.
"""

import os
import sys
from contextlib import contextmanager

import pytest

# Code whose reads of the vendor are branches the layers must both take. Django's own
# reads are Django's business. No branch either: a read that only reports the vendor, and
# the suite's own plumbing of the SQLite template (tests/conftest.py).
WATCHED = ("mica", "catalogue", "submissions", "governance", "markets", "tests")
NOT_BRANCHES = {
    ("mica.site.health", "_database"),
    ("tests.conftest", "_sqlite_template_keep"),
    ("tests.conftest", "_sqlite_restored_from_template"),
}
# The proxy `django.db.connection` reads the attribute on the caller's behalf.
PASS_THROUGH = ("django.utils.connection",)
MIGRATE = "django.core.management.commands.migrate"

MARKERS = ("vendor", "postgres")
# Browser tests run in one layer only, on SQLite: what Chromium shows and axe checks is the
# page, which the database does not change; the branches they pass through are the
# PostgreSQL layer's to run in the tests that check them.
NOT_CHECKED = ("browser",)
# A survey instead of a verdict: each unmarked test that reads the vendor, one a line.
REPORT = os.environ.get("MICA_VENDOR_REPORT")

_reads = None  # the branches the running test reached: {(module, line)}
_plumbing = 0  # inside the suite's own set-up: migrating, loading, restoring


@contextmanager
def suite_plumbing():
    """Reads made inside are the suite's, not the test's: the test database's set-up and
    its reload after a transactional test flushed it."""
    global _plumbing
    _plumbing += 1
    try:
        yield
    finally:
        _plumbing -= 1


class _VendorWatched:
    """The SQLite backend's `vendor`, noting which watched code read it."""

    def __init__(self, value):
        self.value = value

    def __get__(self, instance, owner):
        if _reads is not None and not _plumbing and instance is not None:
            _note(sys._getframe(1))
        return self.value


def _note(frame):
    while frame is not None and frame.f_globals.get("__name__", "").startswith(PASS_THROUGH):
        frame = frame.f_back
    if frame is None:
        return
    module = frame.f_globals.get("__name__", "")
    if module.split(".")[0] not in WATCHED or ".migrations." in module:
        return
    if (module, frame.f_code.co_name) in NOT_BRANCHES or module == __name__:
        return
    if _migrating(frame):
        return
    _reads.add((module, frame.f_lineno))


def _migrating(frame):
    """Whether the read is a migration's (the triggers installed after `migrate`): the test
    database's set-up, or a test of `migrate` itself, which is marked for what it checks."""
    while frame is not None:
        if frame.f_globals.get("__name__") == MIGRATE:
            return True
        frame = frame.f_back
    return False


def pytest_configure(config):
    from django.db.backends.sqlite3.base import DatabaseWrapper

    if not isinstance(DatabaseWrapper.__dict__.get("vendor"), _VendorWatched):
        DatabaseWrapper.vendor = _VendorWatched(DatabaseWrapper.vendor)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _reads
    _reads = set()
    try:
        yield
    finally:
        _reads = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    # What the test set up and ran; the teardown's flush after a transactional test lifts
    # and restores the triggers (reading the vendor) for every such test alike.
    global _reads
    reads, _reads = _reads, None
    yield
    if not reads or any(item.get_closest_marker(name) for name in MARKERS + NOT_CHECKED):
        return
    where = ", ".join(f"{module}:{line}" for module, line in sorted(reads))
    if REPORT:
        with open(REPORT, "a") as report:
            report.write(f"{item.nodeid}\t{where}\n")
        return
    pytest.fail(
        f"{item.nodeid} reaches code that branches on the database ({where}) but is not "
        "marked `vendor`: PostgreSQL does this differently, so the PostgreSQL layer must "
        "run it too (docs/setup.md, 'Which layer a test belongs in')",
        pytrace=False,
    )
