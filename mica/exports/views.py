from django.conf import settings
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils import translation
from django.utils.dateparse import parse_datetime
from django.utils.http import http_date
from django.views.decorators.http import condition, require_safe

from mica.exports.publish import MANIFEST_SIGNATURE
from mica.exports.registry import MANIFEST
from mica.exports.selectors import export_file_get, export_file_open, export_published

MEDIA_CHARSETS = {"text/", "application/json", "application/ld+json", "application/atom+xml"}


@require_safe
def downloads(request):
    build = export_published()
    manifest = build.summary if build else None
    language = translation.get_language()
    files = []
    if manifest:
        files = [
            {**f, "label": f["title"].get(language, f["title"]["en"])} for f in manifest["files"]
        ]
    generated = parse_datetime(manifest["generated_at"]) if manifest else None
    return render(
        request,
        "exports/downloads.html",
        # The command names the configured address, never the request's Host header.
        {
            "manifest": manifest,
            "files": files,
            "generated": generated,
            "site_url": settings.SITE_URL,
        },
    )


def _published(name):
    """(name, etag, media type, last modified) of a published file; 404 for anything else.

    Read from the pointer in the database, so every node answers the same set with the
    same ETag as soon as it is published."""
    build = export_published()
    if build is None or name not in build.files:
        raise Http404
    manifest = build.summary
    generated = parse_datetime(manifest["generated_at"])
    if name == MANIFEST:
        return name, build.files[name], "application/json", generated
    if name == MANIFEST_SIGNATURE:
        return name, build.files[name], "text/plain", generated
    entry = export_file_get(manifest, name)
    if entry is None:
        raise Http404
    return name, entry["sha256"], entry["media_type"], generated


def _published_once(request, name):
    """`_published` read once per request: the ETag, Last-Modified and body all need it."""
    if not hasattr(request, "_mica_published"):
        try:
            request._mica_published = _published(name)
        except Http404:
            request._mica_published = None
    return request._mica_published


def _etag(request, name):
    published = _published_once(request, name)
    return f'"{published[1]}"' if published else None


def _last_modified(request, name):
    published = _published_once(request, name)
    return published[3] if published else None


@require_safe
@condition(etag_func=_etag, last_modified_func=_last_modified)
def download_file(request, name):
    published = _published_once(request, name)
    if published is None:
        raise Http404
    _name, _digest, media_type, generated = published
    stream = export_file_open(name)
    if stream is None:  # replaced by a set without it since the ETag was read
        raise Http404
    if any(media_type.startswith(prefix) for prefix in MEDIA_CHARSETS):
        media_type += "; charset=utf-8"
    response = FileResponse(stream, content_type=media_type)
    response["Content-Disposition"] = f'inline; filename="{name}"'
    response["Cache-Control"] = "public, max-age=300"
    response["Last-Modified"] = http_date(generated.timestamp())
    return response
