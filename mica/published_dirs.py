"""Directories published in one step: built aside, checked, then switched to at once.

Layout under a root:

    builds/<prefix>-<random>/   one directory per build, complete only with its marker file
    current -> builds/...       the published one: a symlink replaced atomically

Readers resolve `current` once per request, so a switch never mixes two builds, and a
build that fails its checks is deleted with `current` left exactly as it was. The
exports (mica.exports.publish) and the baked pages (mica.site.bake) are published so.
"""

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

# A copy fetched from the build store is named after its build, with this suffix: on the
# node that made the build, the build's own directory already has the plain name.
COPY_SUFFIX = ".copy"
# A build directory this old without its marker belongs to a worker that died.
ABANDONED_AFTER_SECONDS = 3600


def build_dir_new(root, prefix):
    """A fresh, empty build directory under root/builds/."""
    (root / "builds").mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=root / "builds"))
    build.chmod(0o755)  # mkdtemp makes it private; the web server reads it
    return build


def dir_switch(root, build):
    """Make `build` the published one: one atomic replace of the `current` link."""
    link = root / f".current-{build.name}"
    os.symlink(build.relative_to(root), link)
    os.replace(link, root / "current")


def dir_current(root):
    """The published build, or None before the first."""
    current = root / "current"
    return current.resolve() if current.exists() else None


def builds_prune(root, *, marker, keep, below=lambda build: ()):
    """Keep the published build and the `keep` newest complete ones, and the builds each of
    them needs (`below(build)`: their names, a layered bake's layers); drop abandoned ones.

    A dropped build leaves builds/ at once (one rename into root/.trash/) and its files
    are deleted in a thread of its own: twenty thousand baked pages take seconds to
    delete, which a publication need not wait for. Whatever a stopped process left in
    the trash goes with the next prune."""
    builds = root / "builds"
    current = dir_current(root)
    complete = sorted(
        (b for b in builds.iterdir() if (b / marker).exists() and b.resolve() != current),
        key=lambda b: b.stat().st_mtime,
    )
    kept = ([current] if current else []) + (complete[-keep:] if keep else [])
    needed = {name for build in kept for name in below(build)}
    dropped = [b for b in (complete[:-keep] if keep else complete) if _name(b) not in needed]
    for build in builds.iterdir():
        abandoned = time.time() - build.stat().st_mtime > ABANDONED_AFTER_SECONDS
        if not (build / marker).exists() and abandoned:
            dropped.append(build)
    trash = root / TRASH
    for build in dropped:
        trash.mkdir(exist_ok=True)
        try:
            os.replace(build, trash / build.name)
        except OSError:  # gone already, or another prune moved it first
            continue
    if trash.is_dir() and any(trash.iterdir()):
        threading.Thread(target=_trash_empty, args=(trash,), name="builds-prune").start()


def _name(build):
    """A build's name, whether the node made it or fetched a copy (mica.content.builds)."""
    return build.name.removesuffix(COPY_SUFFIX)


# Where dropped builds wait, outside builds/, for the thread that deletes them.
TRASH = ".trash"


def _trash_empty(trash):
    for build in list(trash.iterdir()):
        shutil.rmtree(build, ignore_errors=True)
