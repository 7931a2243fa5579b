"""Published builds: immutable file sets in an object store, published by a pointer in
the database, and followed by every node into a copy of its own.

A build (the export set, the baked pages) is written into a local directory first and
checked there (mica.published_dirs). Publishing it then

1. stores each file once, under its SHA-256 (`objects/<sha256>`), in the build store
   (settings.STORAGES["builds"]: S3-compatible object storage through django-storages
   with MICA_S3_BUCKET set, a directory under var/ otherwise); a file the previous
   build already holds is not sent again;
2. stores the build's file list (`builds/<kind>/<name>.json`);
3. moves the kind's pointer (PublishedPointer) to it in one transaction, only forward:
   a build made from older content than the published one never replaces it.

Every node learns what is published from the database. Readers that need bytes on the
node's disk (the baked pages, served in front of Django) read the node's copy, which
`build_follow` brings up to the pointer in a thread of its own, one process a node at a
time; a page whose inputs moved meanwhile goes to Django, so a late copy costs speed,
never freshness. Readers of single files (the downloads) stream from the store when
the node's copy is not there yet.
"""

import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from django.conf import settings
from django.core import checks
from django.core.files.base import ContentFile
from django.core.files.storage import storages
from django.db import DatabaseError, transaction

from mica.content.models import PublishedBuild, PublishedPointer
from mica.published_dirs import COPY_SUFFIX, builds_prune, dir_current, dir_switch

logger = logging.getLogger(__name__)

# Files sent to or fetched from the store at once: S3 answers each in milliseconds.
TRANSFERS = 16
# How often a process asks the database whether its node's copy is behind the pointer.
FOLLOW_SECONDS = 1.0


def build_store():
    return storages["builds"]


def object_name(sha256):
    return f"objects/{sha256[:2]}/{sha256}"


def file_digest(path):
    sha = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            sha.update(block)
    return sha.hexdigest()


class _Objects:
    """Whole objects written and read under their names in the build store.

    On S3 through boto3's client, one request an object: django-storages' save (an upload
    manager with threads of its own per file) and a HEAD before it cost five times the
    CPU, which at twenty thousand pages was three quarters of a full bake. An object is
    content-addressed, so sending one the store already holds rewrites the same bytes.
    """

    def __init__(self, store):
        self.store = store
        self.client = store.connection.meta.client if hasattr(store, "bucket_name") else None

    def _key(self, name):
        # The key the storage itself gives `name` (under MICA_S3_PREFIX): downloads and
        # backups read the same objects through django-storages.
        return self.store._normalize_name(name)

    def put(self, name, path):
        if self.client is None:
            if not self.store.exists(name):
                with open(path, "rb") as stream:
                    self.store.save(name, stream)
            return
        with open(path, "rb") as stream:
            self.client.put_object(
                Bucket=self.store.bucket_name,
                Key=self._key(name),
                Body=stream,
                **self.store.get_object_parameters(name),
            )

    def copy_to(self, name, target):
        """Write the object's bytes into the open binary file `target`."""
        if self.client is None:
            with self.store.open(name, "rb") as source:
                shutil.copyfileobj(source, target, 1 << 20)
            return
        answer = self.client.get_object(Bucket=self.store.bucket_name, Key=self._key(name))
        with answer["Body"] as body:
            shutil.copyfileobj(body, target, 1 << 20)


def _objects_put(directory, files, known):
    """Send every file of the build the store does not hold yet (`known`: digests it has)."""
    objects = _Objects(build_store())
    missing = {sha: relative for relative, sha in files.items() if sha not in known}
    with ThreadPoolExecutor(TRANSFERS) as pool:
        sent = pool.map(
            lambda sha: objects.put(object_name(sha), directory / missing[sha]), missing
        )
        list(sent)
    return len(missing)


def build_made_with(**more):
    """What, besides the tables it read, makes a file of a build what it is: the code, the
    settings, the public address (and what the caller adds). A build made with other ones
    shares no file with a new one; one made with these shares every file whose tables
    have not moved since (tables_moved)."""
    from mica.content.fragments import code_digest
    from mica.content.reads import settings_generation

    return {
        "code": code_digest(),
        "settings": settings_generation(),
        "site_url": settings.SITE_URL,
        **more,
    }


def revisions_document(revisions):
    """Table revisions as a build records them: {table: [number, changed-at]}."""
    return {table: [number, at.isoformat()] for table, (number, at) in revisions.items()}


def tables_moved(before, now):
    """The tables whose revision differs between two revisions_document()s."""
    return {table for table in before.keys() | now.keys() if before.get(table) != now.get(table)}


def build_published(kind):
    """The published build of `kind` (a PublishedBuild), or None before the first."""
    pointer = PublishedPointer.objects.select_related("build").filter(kind=kind).first()
    return pointer.build if pointer else None


def _files_known(kind):
    build = build_published(kind)
    return set(build.files.values()) if build else set()


def build_publish(
    *,
    kind,
    root,
    directory,
    files,
    revision,
    summary,
    reads=None,
    force=False,
    published_with=None,
):
    """Store the checked build in `directory` and move `kind`'s pointer to it.

    `files`: {relative path: sha256} of every file, the marker included; `revision`: the
    content revision the build was made from; `summary`: what readers learn without the
    files (the export manifest, say); `reads`: what a later build needs to know to take
    files from this one. Returns the PublishedBuild, or None when a build
    made from newer content is already published (this one is dropped). `force`
    publishes whatever is published now (a restore brings older content back on purpose).
    `published_with(build)` runs in the transaction that moves the pointer, so what it
    writes (the publication log's entry) commits with the move or not at all.
    """
    sent = _objects_put(directory, files, _files_known(kind))
    name = directory.name
    listing = json.dumps({"kind": kind, "name": name, "files": files}, sort_keys=True)
    build_store().save(f"builds/{kind}/{name}.json", ContentFile(listing.encode()))
    with transaction.atomic():
        build = PublishedBuild.objects.create(
            kind=kind, name=name, revision=revision, files=files, summary=summary, reads=reads or {}
        )
        pointer = PublishedPointer.objects.select_for_update().filter(kind=kind).first()
        if pointer and pointer.build.revision > revision and not force:
            logger.info("%s build %s is older than the published one; not published", kind, name)
            return None
        PublishedPointer.objects.update_or_create(kind=kind, defaults={"build": build})
        if published_with is not None:
            published_with(build)
    logger.info("%s build %s published (%d files, %d sent)", kind, name, len(files), sent)
    # This node's copy is the build itself: no need to fetch it back. Switched at once,
    # even inside an outer transaction: should that roll back, the node's copy is ahead
    # of the pointer and the next follow brings it back to it.
    dir_switch(root, directory)
    return build


def local_name(root):
    """The name of the build this node's copy holds, or None."""
    current = dir_current(root)
    return current.name.removesuffix(COPY_SUFFIX) if current else None


def _local(root, name, marker):
    """Whether this node holds the build `name` whole (made here, or a complete copy)."""
    builds = root / "builds"
    return any((builds / n / marker).exists() for n in (name, f"{name}{COPY_SUFFIX}"))


# --- Following the pointer on a node ------------------------------------------------


def _object_fetch(store, objects, sha256):
    """The node's cached copy of an object, fetched once."""
    cached = objects / sha256
    if not cached.exists():
        partial = objects / f".{sha256}-{os.getpid()}-{threading.get_ident()}"
        with open(partial, "wb") as target:
            store.copy_to(object_name(sha256), target)
        if file_digest(partial) != sha256:
            partial.unlink()
            raise OSError(f"object {sha256} does not match its digest")
        os.replace(partial, cached)
    return cached


def _copy_make(root, build, marker):
    """Lay `build` out under root/builds/<name>/ from the store, the marker last."""
    store = _Objects(build_store())
    objects = root / "objects"
    objects.mkdir(parents=True, exist_ok=True)
    directory = root / "builds" / f"{build.name}{COPY_SUFFIX}"
    shutil.rmtree(directory, ignore_errors=True)  # an earlier, interrupted copy
    directory.mkdir(parents=True)
    directory.chmod(0o755)
    with ThreadPoolExecutor(TRANSFERS) as pool:
        fetched = pool.map(lambda sha: _object_fetch(store, objects, sha), build.files.values())
        cached = dict(zip(build.files, fetched, strict=True))
    # The marker last: a copy without it is incomplete, whatever else it holds.
    for relative in sorted(build.files, key=lambda relative: relative == marker):
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(cached[relative], target)
    return directory


def build_follow(kind, root, marker):
    """Bring this node's copy of `kind` to the published build; True when it moved.

    One process a node at a time (a lock file under `root`); the others keep serving
    the copy they have.
    """
    # The name first: the build's file list (twenty thousand entries for the baked pages)
    # is read only when this node's copy is behind it.
    name = PublishedPointer.objects.filter(kind=kind).values_list("build__name", flat=True).first()
    if name is None or local_name(root) == name:
        return False
    build = build_published(kind)
    if build is None or local_name(root) == build.name:
        return False
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".follow.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        if local_name(root) == build.name:
            return False
        # A layered bake (mica.site.bake_layers) names the builds below it: those this
        # node does not hold yet are fetched first, the nearest last.
        for name in reversed(build.summary.get("below", [])):
            if not _local(root, name, marker):
                _copy_make(root, PublishedBuild.objects.get(kind=kind, name=name), marker)
        directory = _copy_make(root, build, marker)
        dir_switch(root, directory)
    builds_prune(root, marker=marker, keep=1, below=lambda b: build_below(kind, b))
    _objects_prune(root)
    return True


def build_below(kind, directory):
    """The builds the build in `directory` needs below it (a layered bake's layers), as its
    row says; none for a build never published."""
    name = directory.name.removesuffix(COPY_SUFFIX)
    summary = PublishedBuild.objects.filter(kind=kind, name=name).values_list("summary", flat=True)
    return (summary.first() or {}).get("below", [])


def _objects_prune(root):
    """Drop cached objects no build on this node links to any more."""
    objects = root / "objects"
    if not objects.is_dir():
        return
    for cached in objects.iterdir():
        if cached.stat().st_nlink <= 1 and not cached.name.startswith("."):
            cached.unlink(missing_ok=True)


class Follower:
    """Asks the database, at most every FOLLOW_SECONDS, whether this node's copy of a
    kind is behind, and brings it up in a thread of its own."""

    def __init__(self, kind, root, marker):
        self.kind, self.root, self.marker = kind, root, marker
        self._asked = 0.0
        self._running = threading.Lock()

    def poke(self):
        now = time.monotonic()
        if now - self._asked < FOLLOW_SECONDS or self._running.locked():
            return
        self._asked = now
        threading.Thread(target=self._follow, daemon=True, name=f"follow-{self.kind}").start()

    def _follow(self):
        from django.db import connection

        if not self._running.acquire(blocking=False):
            return
        try:
            build_follow(self.kind, Path(self.root()), self.marker)
        except (OSError, DatabaseError):
            logger.exception("this node's copy of the %s build could not follow", self.kind)
        finally:
            connection.close()
            self._running.release()


@checks.register(checks.Tags.compatibility)
def several_nodes_share_the_store(app_configs, **kwargs):
    """Several web nodes on a build store under var/ would each see their own builds."""
    if settings.WEB_NODES > 1 and not settings.S3_BUCKET:
        return [
            checks.Error(
                f"MICA_WEB_NODES is {settings.WEB_NODES} but the published builds live in "
                f"{settings.STORAGES['builds']['OPTIONS'].get('location')}, on this node "
                "only.",
                hint="Set MICA_S3_BUCKET (and MICA_S3_ENDPOINT_URL for a store other than "
                "AWS) so that every node reads the same builds.",
                id="mica.E101",
            )
        ]
    return []
