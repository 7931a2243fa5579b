"""For a browser test module whose tests only read: `from tests.browser.reading import db,
site` replaces the per-test database and site with the module's content, loaded once
and committed (shared_content and shared_site in tests/browser/conftest.py)."""

import pytest


@pytest.fixture
def db(shared_content):
    """The tests only read: the module's database is the content loaded once and
    committed, never a test transaction."""


@pytest.fixture
def site(shared_site):
    return shared_site
