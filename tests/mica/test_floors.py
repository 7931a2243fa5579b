"""The floors hold: the import contracts cover every package, and a wrong-way import fails them."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("mica", "markets", "catalogue", "submissions", "governance")


def contracts():
    with open(ROOT / "pyproject.toml", "rb") as config:
        return tomllib.load(config)["tool"]["importlinter"]["contracts"]


def layered_modules():
    (floors,) = [c for c in contracts() if c["type"] == "layers"]
    return {name.strip() for layer in floors["layers"] for name in layer.split("|")}


def lint_imports(tree):
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache"], cwd=tree, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def project_copy(tmp_path):
    for name in (*PACKAGES, "pyproject.toml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    return tmp_path


def test_every_app_of_the_project_stands_on_a_floor():
    project_apps = {
        config.name for config in apps.get_app_configs() if config.name.split(".")[0] in PACKAGES
    }
    assert project_apps, "no app of the project is installed"
    assert project_apps <= layered_modules(), project_apps - layered_modules()


def test_the_project_keeps_its_floors(project_copy):
    result = lint_imports(project_copy)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "wrong_way"),
    [
        ("mica/methodology/selectors.py", "import governance.selectors"),  # floor 1 -> floor 5
        ("markets/selectors.py", "import catalogue.selectors"),  # floor 2 -> floor 3
        ("submissions/ingest.py", "from governance.gate import cell_recompute"),
        ("governance/views.py", "import mica.site.views"),  # a floor -> the roof
        ("mica/content/page_cache.py", "import mica.methodology.models"),  # ground -> floor 1
    ],
)
def test_a_wrong_way_import_breaks_the_floors(project_copy, module, wrong_way):
    path = project_copy / module
    path.write_text(path.read_text() + f"\n\ndef _wrong_way():\n    {wrong_way}\n")
    result = lint_imports(project_copy)
    assert result.returncode == 1, result.stdout[-3000:]
    assert "BROKEN" in result.stdout
