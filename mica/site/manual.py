"""The manual: the MkDocs site built from docs/ into settings.DOCS_DIR, served at /docs/.

English lives at /docs/ and Korean at /docs/ko/ (mkdocs-static-i18n's layout); /ko/docs/,
where a reader of the Korean pages looks first, leads there. The manual's pages are files
of the release, so they are read from this node's own build, never from the database.
"""

import base64
import hashlib
import re
from functools import lru_cache
from pathlib import Path

from csp.constants import SELF
from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpResponsePermanentRedirect
from django.utils._os import safe_join
from django.views.decorators.http import require_safe
from django.views.static import serve

# Material writes a few small scripts inline (the site's scope, the colour palette);
# they are allowed by their digests, page by page, so no other inline script runs.
INLINE_SCRIPT = re.compile(rb"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
# Material's icons in its stylesheet are data: URIs.
MANUAL_IMAGES = [SELF, "data:"]


@lru_cache(maxsize=256)
def _inline_script_digests(path, _mtime):
    """The CSP source of each inline script of the page at `path` (as of `_mtime`)."""
    digests = []
    for match in INLINE_SCRIPT.finditer(Path(path).read_bytes()):
        attrs = match.group("attrs")
        if b"src=" in attrs or b"application/json" in attrs:
            continue
        digest = base64.b64encode(hashlib.sha256(match.group("body")).digest()).decode()
        digests.append(f"'sha256-{digest}'")
    return tuple(sorted(set(digests)))


def _file_of(path):
    """The built file `path` names, a folder's index.html, or None."""
    try:
        target = Path(safe_join(settings.DOCS_DIR, path))
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() else None
    # A path outside the build (SuspiciousFileOperation), or one no file system takes
    # (a name too long): nothing of the manual is there.
    except (SuspiciousFileOperation, OSError, ValueError):
        return None


def _is_folder(path):
    try:
        return Path(safe_join(settings.DOCS_DIR, path)).is_dir()
    except (SuspiciousFileOperation, OSError, ValueError):
        return False


@require_safe
def manual_page(request, path=""):
    """A page or asset of the built manual, with the site's security headers."""
    if path and not path.endswith("/") and _is_folder(path):
        return HttpResponsePermanentRedirect(f"{request.path}/")
    target = _file_of(path)
    if target is None:
        raise Http404
    response = serve(request, str(target.relative_to(settings.DOCS_DIR)), settings.DOCS_DIR)
    if target.suffix == ".html" and response.status_code == 200:
        scripts = _inline_script_digests(str(target), target.stat().st_mtime_ns)
        response._csp_update = {"script-src": list(scripts), "img-src": MANUAL_IMAGES}
    return response


@require_safe
def manual_korean(request, path=""):
    """/ko/docs/… is where the Korean pages' reader looks: the Korean manual."""
    return HttpResponsePermanentRedirect(f"/docs/ko/{path}")
