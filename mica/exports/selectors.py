"""The published export set, as readers see it: the pointer in the database names it,
the node's copy or the build store holds its bytes (mica.content.builds)."""

from pathlib import Path

from django.conf import settings

from mica.content.builds import Follower, build_published, build_store, local_name, object_name
from mica.exports.registry import MANIFEST
from mica.published_dirs import dir_current

# The kind of build the exports' pointer names.
EXPORT_KIND = "exports"


def export_root():
    return Path(settings.EXPORT_DIR)


# Brings this node's copy up to the published set, off the request that noticed.
export_follower = Follower(EXPORT_KIND, export_root, MANIFEST)


def export_published():
    """The published set's build (mica.content.models.PublishedBuild), or None."""
    return build_published(EXPORT_KIND)


def export_current():
    """(this node's copy of the published set or None, its manifest), or (None, None)
    before the first set. Without a copy, export_file_open reads from the store."""
    build = export_published()
    if build is None:
        return None, None
    root = export_root()
    directory = dir_current(root) if local_name(root) == build.name else None
    if directory is None:
        export_follower.poke()
    return directory, build.summary


def export_file_open(name):
    """The bytes of a published file (the manifest included), from the node's copy when it
    has the published set, else from the build store; None for a name the set lacks."""
    build = export_published()
    if build is None or name not in build.files:
        return None
    root = export_root()
    if local_name(root) == build.name:
        try:
            return open(dir_current(root) / name, "rb")  # noqa: SIM115 - the caller closes it
        except OSError:
            pass  # pruned under this process: the store has it
    else:
        export_follower.poke()
    return build_store().open(object_name(build.files[name]), "rb")


def export_file_get(manifest, name):
    """The manifest entry of a published file; None for any name the set does not list."""
    return next((f for f in manifest["files"] if f["name"] == name), None)


def export_page_variant(request):
    """(which set, when it was published) for the page cache: the downloads page shows
    the published set, which a job replaces some time after the content changed."""
    build = export_published()
    if build is None:
        return "", None
    return build.name, build.created_at.timestamp()
