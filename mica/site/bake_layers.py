"""A published bake as a chain of layers: what a bake after a commit writes is its change.

A bake that renders a dozen pages of twenty thousand writes those pages and a manifest
naming them, the pages it dropped (`removed`) and the layers below it (`below`, nearest
first). Every other page is the one the layers below hold. Without layers, each bake
laid out twenty thousand folders and links and a manifest of twenty thousand entries:
some 4 seconds whatever it rendered, more than the 2 % of a full bake an edit may cost.

A layer is immutable once its manifest is written, so a process keeps the manifests it
decoded (the base layer's twenty thousand entries take half a second to decode) and a
bake or a web process reads only the layers it has not seen. A full bake, and every
MAX_LAYERS-th bake, is a layer with nothing below: the chain never grows without end.

Stored headers leave out Last-Modified: it is when the page's tables last moved, which
the build's revisions say, and which a commit to other rows of one of them changes
without changing the page.
"""

import datetime
import json
import os
from pathlib import Path

from django.utils.http import http_date

from mica.content.builds import COPY_SUFFIX
from mica.content.page_cache import page_last_modified
from mica.content.revision import NO_REVISION

MANIFEST = "pages.json"
# Layers a chain may hold; the bake that would make one more lays every page out again.
MAX_LAYERS = 16

# {directory: (the manifest file's stat, its manifest)} of the complete layers this
# process decoded or wrote. The stat guards against a manifest written again in place,
# which a layer never is but a restore or a hand may do.
_decoded = {}


def _stat(directory):
    stat = os.stat(Path(directory) / MANIFEST)
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def layer_manifest(directory):
    key, stat = str(directory), _stat(directory)
    if key not in _decoded or _decoded[key][0] != stat:
        manifest = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
        _decoded[key] = (stat, manifest)
    return _decoded[key][1]


def layer_remember(directory, manifest):
    """A layer this process wrote: the next bake need not decode it."""
    _decoded[str(directory)] = (_stat(directory), manifest)


def layer_directory(root, name):
    """This node's directory of the layer `name`: the build itself on the node that made
    it, a copy fetched from the store elsewhere."""
    for candidate in (name, f"{name}{COPY_SUFFIX}"):
        directory = Path(root) / "builds" / candidate
        if (directory / MANIFEST).exists():
            return directory
    raise FileNotFoundError(f"layer {name} of the published bake is not on this node")


def layers_below(manifest):
    return manifest.get("below", [])


class BakeView:
    """A published bake as its chain resolves it: each page's manifest entry and the layer
    directory that holds its file; `manifest` is the top layer's, every page listed."""

    def __init__(self, root, directory):
        top = layer_manifest(directory)
        chain = [Path(directory)] + [layer_directory(root, n) for n in layers_below(top)]
        self.pages, self.where = {}, {}
        for layer in reversed(chain):
            manifest = layer_manifest(layer)
            for path in manifest.get("removed", ()):
                self.pages.pop(path, None)
                self.where.pop(path, None)
            self.pages.update(manifest["pages"])
            self.where.update(dict.fromkeys(manifest["pages"], layer))
        self.depth = len(chain)
        self.directory = Path(directory)
        self.manifest = {**top, "pages": self.pages}
        _forget_all_but(chain)

    def file(self, path):
        """The file holding the bytes of the page at `path`."""
        return self.where[path] / self.pages[path]["file"]

    def files(self):
        return {path: self.file(path) for path in self.pages}


def _forget_all_but(chain):
    """Keep the decoded manifests of this chain only: the others are pruned soon."""
    wanted = {str(directory) for directory in chain}
    for key in list(_decoded):
        if key not in wanted:
            del _decoded[key]


class LastModified:
    """Last-Modified of a baked page: when the tables it read last moved, as the build's
    revisions say (mica.content.page_cache gives a live page the same)."""

    def __init__(self, revisions_document):
        self.revisions = {
            table: (number, datetime.datetime.fromisoformat(at))
            for table, (number, at) in revisions_document.items()
        }
        self._dates = {}

    def __call__(self, tables):
        key = tuple(tables)
        if key not in self._dates:
            read = {t: self.revisions.get(t, NO_REVISION) for t in key}
            self._dates[key] = http_date(page_last_modified(key, read))
        return self._dates[key]


def headers_stored(headers):
    """The headers a layer keeps of a rendered page (LastModified makes the last one)."""
    return [(k, v) for k, v in headers if k.lower() != "last-modified"]
