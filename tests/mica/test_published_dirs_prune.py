"""Pruning published builds: a dropped build leaves builds/ at once, and its files are
deleted in a thread of its own, so a bake of twenty thousand pages does not wait for the
last-but-two build's twenty thousand files to go (issue 31, the bake after one edit)."""

import os
import threading
import time

from mica.published_dirs import TRASH, build_dir_new, builds_prune, dir_switch

MARKER = "pages.json"


def complete_build(root, pages, age):
    build = build_dir_new(root, "test")
    for number in range(pages):
        (build / f"page-{number}").mkdir()
        (build / f"page-{number}" / "index.html").write_text(str(number))
    (build / MARKER).write_text("{}")
    os.utime(build, (time.time() - age, time.time() - age))
    return build


def prune_threads_done():
    for thread in threading.enumerate():
        if thread.name == "builds-prune":
            thread.join(timeout=60)


def test_the_oldest_builds_leave_at_once_and_their_files_go_after(tmp_path):
    oldest, older, newer, published = (
        complete_build(tmp_path, 50, age) for age in (400, 300, 200, 100)
    )
    dir_switch(tmp_path, published)
    builds_prune(tmp_path, marker=MARKER, keep=2)
    assert sorted(p.name for p in (tmp_path / "builds").iterdir()) == sorted(
        [older.name, newer.name, published.name]
    )
    assert not oldest.exists()
    prune_threads_done()
    assert list((tmp_path / TRASH).iterdir()) == []
    assert (published / "page-49" / "index.html").read_text() == "49"


def test_what_a_stopped_prune_left_in_the_trash_goes_with_the_next(tmp_path):
    published = complete_build(tmp_path, 3, 100)
    dir_switch(tmp_path, published)
    left = tmp_path / TRASH / "test-left"
    (left / "page").mkdir(parents=True)
    (left / "page" / "index.html").write_text("left")
    builds_prune(tmp_path, marker=MARKER, keep=2)
    prune_threads_done()
    assert list((tmp_path / TRASH).iterdir()) == []
    assert [p.name for p in (tmp_path / "builds").iterdir()] == [published.name]


def test_an_abandoned_build_without_its_marker_is_dropped_too(tmp_path):
    published = complete_build(tmp_path, 3, 100)
    dir_switch(tmp_path, published)
    abandoned = build_dir_new(tmp_path, "test")
    (abandoned / "half.html").write_text("half")
    os.utime(abandoned, (time.time() - 7200, time.time() - 7200))
    recent = build_dir_new(tmp_path, "test")  # another bake's, still being written
    builds_prune(tmp_path, marker=MARKER, keep=2)
    prune_threads_done()
    assert sorted(p.name for p in (tmp_path / "builds").iterdir()) == sorted(
        [published.name, recent.name]
    )
