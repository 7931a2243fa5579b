"""The publication log in public: /transparency/ (newest first, a page at a time),
/transparency/log.json (every entry, oldest first, as a verifier reads it) and
/transparency/key (the public key in force). Everything is read from the database, so
every node answers the same."""

import json
from datetime import UTC

from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import condition, require_safe

from mica.content.models import PublicationKind
from mica.content.publication_log import (
    entry_document,
    publication_log_document_head,
    publication_log_entries,
    publication_log_key,
    publication_log_last,
    publication_log_newest_first,
)
from mica.publication_chain import GENESIS

PAGE_SIZE = 50
# Hex digits a digest shows on the page; the whole digest is in the element's title.
SHORT = 12


def transparency_variant(request):
    """(which entry is the last, when it was appended) for the page cache: appending an
    entry moves no table revision, so the page says itself when the log grew."""
    last = publication_log_last()
    if last is None:
        return "", None
    return f"{last.sequence}:{last.digest}", last.at.timestamp()


def _digest(value, label):
    if not value or value == GENESIS:
        return None
    return {"label": label, "full": value, "short": value[:SHORT]}


def _edition_url(slug):
    try:
        return reverse("methodology:edition", args=[slug])
    except NoReverseMatch:
        return reverse("methodology:editions")


def _exports(subject, language):
    return {
        "what": _("Export set of edition %(edition)s") % {"edition": subject.get("edition")},
        "url": reverse("site:downloads"),
        "digest": _digest(subject.get("manifest_sha256"), _("Manifest SHA-256")),
    }


def _bake(subject, language):
    return {
        "what": _("The public pages (%(pages)s pages)") % {"pages": subject.get("pages")},
        "url": reverse("site:home"),
        "digest": _digest(subject.get("manifest_sha256"), _("Page manifest SHA-256")),
    }


def _edition(subject, language):
    labels = subject.get("label") or {}
    label = labels.get(language) or labels.get("en") or subject.get("slug")
    return {
        "what": _("Edition %(edition)s") % {"edition": label},
        "url": _edition_url(str(subject.get("slug", ""))),
        "digest": _digest(subject.get("catalogue_sha256"), _("Task catalogue SHA-256")),
    }


def _key_rotation(subject, language):
    return {
        "what": _("A new signing key, %(key)s") % {"key": subject.get("new_key_id")},
        # Every key the log has used is in log.json; /transparency/key is only the last.
        "url": reverse("site:transparency-log"),
        "digest": None,
    }


def _holdout_reveal(subject, language):
    slug = str(subject.get("task", ""))
    try:
        url = reverse("catalogue:task-detail", args=[slug])
    except NoReverseMatch:
        url = reverse("catalogue:task-list")
    return {
        "what": _("Holdout task %(task)s, made public: its salt and commitments opened")
        % {"task": slug},
        "url": url,
        "digest": None,
    }


DESCRIBED = {
    PublicationKind.EXPORTS: _exports,
    PublicationKind.BAKE: _bake,
    PublicationKind.EDITION: _edition,
    PublicationKind.KEY_ROTATION: _key_rotation,
    PublicationKind.HOLDOUT_REVEAL: _holdout_reveal,
}


KIND_LABELS = dict(PublicationKind.choices)


def _row(entry, language):
    describe = DESCRIBED.get(entry.kind)
    published = describe(entry.subject, language) if describe else {"what": entry.kind}
    digests = [
        published.get("digest"),
        _digest(entry.digest, _("Entry digest")),
        _digest(entry.previous_digest, _("Digest of the entry before")),
    ]
    return {
        "entry": entry,
        # Whole seconds: HTML's datetime takes at most three digits of a fraction.
        "at": entry.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kind": KIND_LABELS.get(entry.kind, entry.kind),
        "what": published["what"],
        "url": published.get("url"),
        "digests": [digest for digest in digests if digest],
    }


@require_safe
def transparency(request):
    page = Paginator(publication_log_newest_first(), PAGE_SIZE).get_page(request.GET.get("page"))
    entries = list(page.object_list)
    language = translation.get_language()
    # The first page's first entry is the last: the key it hands on costs no query.
    key = publication_log_key(entries[0] if page.number == 1 and entries else None)
    return render(
        request,
        "site/transparency.html",
        {
            "page": page,
            "rows": [_row(entry, language) for entry in entries],
            "key_id": key[0] if key else None,
        },
    )


def _log_etag(request):
    last = publication_log_last()
    return f'"{last.sequence}-{last.digest}"' if last else '"empty"'


@require_safe
@condition(etag_func=_log_etag)
def transparency_log(request):
    """Every entry, oldest first, streamed: the log only grows."""
    head = json.dumps(publication_log_document_head(), ensure_ascii=False)

    def body():
        yield head[:-1] + ', "entries": ['
        for number, entry in enumerate(publication_log_entries().iterator(chunk_size=500)):
            separator = "," if number else ""
            yield separator + "\n" + json.dumps(entry_document(entry), ensure_ascii=False)
        yield "\n]}\n"

    response = StreamingHttpResponse(body(), content_type="application/json; charset=utf-8")
    response["Cache-Control"] = "public, max-age=0, must-revalidate"
    return response


@require_safe
def transparency_key(request):
    key = publication_log_key()
    if key is None:
        raise Http404
    response = HttpResponse(key[1], content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="mica-signing-key-{key[0]}.pem"'
    response["Cache-Control"] = "public, max-age=0, must-revalidate"
    return response
