"""Parts of pages kept apart from the page cache, keyed by what they are made of.

A page read afresh (its whole-page entry gone, or never made under these
revisions) still recomputes and re-renders much that has not changed: a hundred
task rows, a methodology's chapters filled with live figures. Such a part is
kept here under a key made of the revisions of the tables it reads, the reader's
language, the settings, the code and whatever else the caller names, so an edit
committed anywhere it reads changes its key at once and the old entry is never
served again. The fragments live in a cache of their own ("fragments"), which clearing
the page cache leaves warm.

A transaction holding content changes that the revisions do not count yet sees
what nobody else sees under the same revisions: it neither reads nor stores.
"""

import hashlib
from functools import cache
from pathlib import Path

from django.conf import settings
from django.core.cache import caches
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import mark_safe

from mica.content.reads import settings_generation, tables_read_declare, tables_recorded
from mica.content.revision import revision_lines, revision_pending, revisions_read

CACHE_ALIAS = "fragments"
KEY_PREFIX = "fragment:"
READS_PREFIX = "fragment-reads:"


# What fragments are made with besides the database: a deploy that changes any of it
# changes every key, so a shared cache never hands out what the new code would make
# otherwise.
CODE_PACKAGES = ("mica", "catalogue", "markets", "governance", "submissions")
CODE_PATTERNS = [(package, "*.py") for package in CODE_PACKAGES]
CODE_PATTERNS += [("templates", "*.html"), ("templates", "*.svg"), ("locale", "*.mo")]


@cache
def code_digest():
    """The project's Python, templates and compiled translations, as one digest."""
    root = Path(settings.BASE_DIR)
    digest = hashlib.sha256()
    for folder, pattern in CODE_PATTERNS:
        for path in sorted((root / folder).rglob(pattern)):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def fragments_on():
    return settings.FRAGMENT_CACHE_SECONDS > 0


def fragment_revisions():
    """The revisions fragments are keyed by (the page's own, read before it rendered), or
    None when the fragment cache is not to be used: switched off, or this transaction
    holds changes the revisions do not count."""
    if not fragments_on() or revision_pending():
        return None
    return revisions_read()


def fragment_key(name, revisions, tables, *parts):
    """The key of fragment `name` made of `tables` at `revisions` and of `parts` (what
    else it shows), in the reader's language."""
    lines = [name, code_digest(), str(settings_generation()), translation.get_language() or ""]
    lines += [str(part) for part in parts]
    lines += revision_lines(tables, revisions)
    return KEY_PREFIX + hashlib.sha256("\n".join(lines).encode()).hexdigest()


def fragments_get(keys):
    return caches[CACHE_ALIAS].get_many(keys)


def fragments_set(entries):
    caches[CACHE_ALIAS].set_many(entries, settings.FRAGMENT_CACHE_SECONDS)


def computed(name, compute, *parts, tables=()):
    """compute(), once for each revision of the tables its queries read.

    The tables it read last time choose the key; `tables` names those it depends on
    without reading them (a record the caller read and passes in).
    """
    revisions = fragment_revisions()
    if revisions is None:
        return compute()
    kept = _kept(name, revisions, [parts])
    if parts in kept:
        read, value = kept[parts]
        # No query runs for it: the page around it still counts what it shows.
        tables_read_declare(read)
        return value
    return _keep(name, revisions, lambda: {parts: compute()}, tables)[parts]


def computed_many(name, compute_many, keys, *, tables=()):
    """Keep for each of `keys` what computed(name, compute, key) would keep, making the
    missing ones in one call: compute_many(missing keys) -> {key: value}.

    For work that reads many records at once (the bake), where one query for a hundred
    tasks costs about what one query for one task costs.
    """
    revisions = fragment_revisions()
    if revisions is None:
        return
    kept = _kept(name, revisions, [(key,) for key in keys])
    missing = [key for key in keys if (key,) not in kept]
    if missing:
        _keep(name, revisions, lambda: {(k,): v for k, v in compute_many(missing).items()}, tables)


def _reads_key(name, parts):
    return READS_PREFIX + fragment_key(name, {}, (), *parts)


def _kept(name, revisions, parts_list):
    """{parts: (tables it read, value)} of the fragments kept under these revisions."""
    store = caches[CACHE_ALIAS]
    reads_keys = {parts: _reads_key(name, parts) for parts in parts_list}
    reads = store.get_many(reads_keys.values())
    keys = {
        parts: fragment_key(name, revisions, reads[key], *parts)
        for parts, key in reads_keys.items()
        if key in reads
    }
    values = store.get_many(keys.values())
    return {
        parts: (reads[reads_keys[parts]], values[key])
        for parts, key in keys.items()
        if key in values
    }


def _keep(name, revisions, compute_all, tables):
    """compute_all() -> {parts: value}, each value kept under the tables all of them read."""
    with tables_recorded() as recorder:
        values = compute_all()
    read = recorder.watched() | frozenset(tables)
    entries = {}
    for parts, value in values.items():
        entries[_reads_key(name, parts)] = read
        entries[fragment_key(name, revisions, read, *parts)] = value
    fragments_set(entries)
    return values


def fragment_rendered(template, context, *parts, tables=()):
    """`template` rendered with the dict context() returns, kept as a fragment made of
    what context() and the rendering read and of `parts`."""
    return computed(
        template,
        lambda: mark_safe(render_to_string(template, context())),
        *parts,
        tables=tables,
    )
