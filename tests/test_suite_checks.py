"""The suite's own rule: no test can pass having checked nothing.

A loop of asserts over records, links or files found at run time passes silently
when it finds none; such a loop needs a guard that what it walks is not empty.
"""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _is_literal(node, fixed=frozenset()):
    """Whether walking `node` walks what the test itself wrote down."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant)):
        return True
    if isinstance(node, ast.Name):
        return node.id.isupper() or node.id in fixed
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left, fixed) and _is_literal(node.right, fixed)
    if isinstance(node, (ast.ListComp, ast.SetComp)):
        return all(_is_literal(g.iter, fixed) for g in node.generators)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("range", "sorted"):
        return all(_is_literal(arg, fixed) for arg in node.args)
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("items", "values"):
        return _is_literal(node.func.value, fixed)
    return False


def _fixed_names(function):
    """Names the function binds to a literal: walking them finds what the test wrote."""
    fixed = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _is_literal(node.value):
            fixed |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return fixed


def _guarded(loop, function, asserts):
    if _is_literal(loop.iter, _fixed_names(function)):
        return True
    walked = _names(loop.iter)
    if any(a.lineno < loop.lineno and walked & _names(a) for a in asserts):
        return True
    # Or an assert after the loop on what the loop collected (seen.add(...); assert seen ...).
    collected = {
        n.func.value.id
        for n in ast.walk(loop)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
    }
    return any(a.lineno > loop.lineno and collected & _names(a) for a in asserts)


def unguarded_loops(source):
    tree = ast.parse(source)
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or not function.name.startswith("test"):
            continue
        asserts = [n for n in ast.walk(function) if isinstance(n, ast.Assert)]
        for loop in ast.walk(function):
            checks = isinstance(loop, ast.For) and any(
                isinstance(n, ast.Assert) for part in loop.body for n in ast.walk(part)
            )
            if checks and not _guarded(loop, function, asserts):
                yield f"{function.name}:{loop.lineno}: for … in {ast.unparse(loop.iter)}"


def test_no_loop_of_asserts_passes_over_nothing():
    files = sorted(TESTS.rglob("test_*.py"))
    assert len(files) > 50
    found = [
        f"{path.relative_to(TESTS)}:{where}"
        for path in files
        for where in unguarded_loops(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "guard these loops against walking nothing:\n" + "\n".join(found)


def test_the_check_sees_a_loop_that_walks_nothing():
    vacuous = "def test_x(client):\n    for link in client.links():\n        assert link\n"
    guarded = (
        "def test_x(client):\n    links = client.links()\n    assert links\n"
        "    for link in links:\n        assert link\n"
    )
    assert list(unguarded_loops(vacuous))
    assert not list(unguarded_loops(guarded))


# A test planted outside the suite that reaches a branch on the database: the bake's
# choice of renderer processes reads the vendor (mica/site/bake.py), as a write through a
# service with a vendor branch would.
PLANTED = """
import pytest
from django.test import override_settings

from mica.site import bake

{mark}
def test_planted():
    with override_settings(PAGE_BAKE_PROCESSES=2):
        bake._processes(2, bake.FORK_FROM_PAGES)
"""


def _planted_run(tmp_path, mark):
    import os
    import subprocess
    import sys

    planted = tmp_path / "test_planted.py"
    planted.write_text(PLANTED.format(mark=mark))
    root = TESTS.parent
    env = {k: v for k, v in os.environ.items() if k not in ("MICA_DATABASE_URL", "CI")}
    env.pop("MICA_VENDOR_REPORT", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.vendor_branches", "-p", "no:cacheprovider"]
        + ["-c", str(root / "pyproject.toml"), "--rootdir", str(tmp_path), str(planted), "-q"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_unmarked_test_reaching_a_vendor_branch_fails_on_sqlite(tmp_path):
    """docs/setup.md: "any test that reaches code branching on the database ... is marked
    `vendor`"; the PostgreSQL layer runs only marked tests, so an unmarked one would never
    meet PostgreSQL."""
    unmarked = _planted_run(tmp_path, mark="")
    assert unmarked.returncode == 1, unmarked.stdout
    assert "mica.site.bake:" in unmarked.stdout
    assert "not marked `vendor`" in unmarked.stdout

    marked = _planted_run(tmp_path, mark="@pytest.mark.vendor")
    assert marked.returncode == 0, marked.stdout
