"""A server has mica_verify, which the publish job checks every export set with before it
is published, installed as the manual's Deployers page says; without it the portal does
not start, and says how to install it.

Uninstalled, the checkout's folder mica_verify/ imports from the project's directory as an
empty namespace package, so the failure would otherwise come at the first publication.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ".venv/bin/pip install --no-deps ./mica_verify"
GUIDES = ("deployers.md", "deployers.ko.md")


def portal_start(python_path, var_dir):
    """Set the portal up in a fresh process run from the checkout, as its services are,
    finding packages on `python_path` only: without the site directory, no path entry of
    `make`'s editable install puts the checkout's mica_verify in reach. The verifier's
    location on success."""
    code = "import django, mica_verify; django.setup(); print(mica_verify.__file__)"
    return subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.pathsep.join(map(str, python_path)),
            "DJANGO_SETTINGS_MODULE": "mica.settings",
            "MICA_VAR_DIR": str(var_dir),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_deployers_guide_installs_the_verifier_in_both_languages():
    for guide in GUIDES:
        assert INSTALL in (ROOT / "docs" / "guides" / guide).read_text(), guide


def test_without_the_verifier_the_portal_does_not_start_and_says_how_to_install_it(tmp_path):
    started = portal_start([sysconfig.get_path("purelib")], tmp_path / "var")
    assert started.returncode != 0
    assert "ImproperlyConfigured: mica_verify is not installed" in started.stderr
    assert INSTALL in started.stderr


def test_installed_as_the_guide_says_the_verifier_is_the_one_the_portal_runs(tmp_path):
    # Built from a copy, as pip would build the checkout's folder, so the test leaves no
    # build directory in the checkout.
    source = shutil.copytree(
        ROOT / "mica_verify", tmp_path / "mica_verify", ignore=shutil.ignore_patterns("build")
    )
    target = tmp_path / "site-packages"
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            target,
            source,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr
    started = portal_start([target, sysconfig.get_path("purelib")], tmp_path / "var")
    assert started.returncode == 0, started.stderr[-2000:]
    # The installed package, not the namespace the checkout's folder would give.
    assert Path(started.stdout.strip()) == target / "mica_verify" / "__init__.py"
