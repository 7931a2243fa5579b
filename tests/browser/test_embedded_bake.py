"""`make run` on a fresh var/ directory serves the baked pages (issue 20): its set-up
bakes every public page, `manage.py serve` answers from the bake, and an edit committed
by another process is seen at once, then published in the next bake by the worker."""

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.browser.conftest import assert_accessible
from tests.browser.test_embedded_jobs import ROOT
from tests.deploy.test_stack import free_port, wait_for
from tests.support import fresh_environment, manage, serving

pytestmark = pytest.mark.browser

EDIT = """
from mica.methodology.models import GlossaryTerm
term = GlossaryTerm.objects.order_by("pk").first()
term.definition_en += " Edited while the bake was published."
term.save()
"""


def fetch(base, path):
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as response:
        return response.read()


def baked(var, path):
    relative = path.strip("/")
    return (var / "pages" / "current" / relative / "index.html").read_bytes()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    var = tmp_path_factory.mktemp("bake-var")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = fresh_environment(var, MICA_PAGE_BAKE_DEBOUNCE_SECONDS="1")
    # The set-up half of `make run`, as the Makefile runs it.
    subprocess.run(
        ["make", "serve-setup", f"PORT={port}", f"PY={sys.executable}"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    env["MICA_SITE_URL"] = base
    with serving(env, port, var):
        yield {"base": base, "var": var, "env": env}


def test_make_run_serves_the_baked_pages(served, page):
    base, var = served["base"], served["var"]
    for path in ["/", "/ko/", "/methodology/", "/ko/tasks/"]:
        assert fetch(base, path) == baked(var, path), path
    page.goto(f"{base}/ko/methodology/")
    assert page.locator("html").get_attribute("lang") == "ko"
    assert_accessible(page)


def test_an_edit_is_seen_at_once_and_then_baked(served):
    base, var = served["base"], served["var"]
    before = (var / "pages" / "current").resolve()
    manage(served["env"], "shell", "-c", EDIT)
    # At once: the bake no longer answers for the pages the glossary shows on.
    assert b"Edited while the bake was published." in fetch(base, "/methodology/")
    assert b"Edited while" not in baked(var, "/methodology/")

    def rebaked():
        return (var / "pages" / "current").resolve() != before and b"Edited while" in baked(
            var, "/methodology/"
        )

    wait_for(rebaked, timeout=180, what="the worker to publish the next bake")
    assert fetch(base, "/methodology/") == baked(var, "/methodology/")
    assert Path(var / "pages" / "current").is_symlink()
    # The bake's processes, forked from the worker, end without the worker's own
    # "Warm shutdown", which would tell whoever reads the log that the worker stopped.
    assert "Warm shutdown" not in (var / "serve.log").read_text()
