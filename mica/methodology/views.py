from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from mica.bilingual import LANGUAGES
from mica.content.fragments import computed
from mica.methodology.diff import EDITION_STANDINGS, edition_diff_read, edition_standing
from mica.methodology.exports import methodology_pack, pack_filename
from mica.methodology.extensions import open_challenges
from mica.methodology.facts import live_facts
from mica.methodology.models import Edition, EditionStatus
from mica.methodology.presenters import methodology_view
from mica.methodology.selectors import (
    edition_current,
    pack_content,
    reference_citations,
    section_record_get,
)
from mica.methodology.selectors import edition_list as edition_list_q

CHAPTERS_TEMPLATE = "methodology/_chapters.html"


def _edition_or_404(slug=None):
    if slug is None:
        edition = edition_current()
    else:
        edition = Edition.objects.filter(slug=slug).first()
    if edition is None:
        raise Http404
    return edition


def challenge_url(section_id):
    """Where a reader challenges a claim of the current edition."""
    return reverse("submissions:challenge-new") + f"?section={section_id}"


def _presented(edition):
    """The edition in the reader's language with its live figures, made once for each
    revision of what it reads (pack_texts and the edition's own figures included)."""
    language = translation.get_language()
    return computed(
        "methodology-page",
        lambda: methodology_view(
            pack_content(edition),
            live_facts(edition),
            language,
            citations=reference_citations(edition),
        ),
        edition.pk,
        tables=[Edition._meta.db_table],
    )


def _downloads(edition):
    return [(lang, pack_filename(edition, lang)) for lang in LANGUAGES]


def _page_and_chapters(edition, challenge_base):
    """The presented edition and its chapters as HTML, kept together as one fragment
    (the page around them reads the same). A page that takes challenges marks the
    claims under challenge, so the open challenges are part of what it reads."""

    def rendered():
        page = _presented(edition)
        context = {
            "edition": edition,
            "page": page,
            "downloads": _downloads(edition),
            "challenge_base": challenge_base,
            "under_challenge": _under_challenge(edition) if challenge_base else {},
        }
        return page, mark_safe(render_to_string(CHAPTERS_TEMPLATE, context))

    return computed(
        "methodology-chapters",
        rendered,
        edition.pk,
        challenge_base,
        tables=[Edition._meta.db_table],
    )


def _edition_page(request, edition, challenge_base, **context):
    page, chapters = _page_and_chapters(edition, challenge_base)
    return render(
        request,
        "methodology/methodology.html",
        {
            "edition": edition,
            "page": page,
            "downloads": _downloads(edition),
            "chapters": chapters,
            **context,
        },
    )


@require_safe
def methodology(request):
    return _edition_page(request, _edition_or_404(), challenge_url(""))


def _under_challenge(edition):
    """section id -> the first open public challenge on it (one query for the page)."""
    marks = {}
    for challenge in open_challenges(edition):
        marks.setdefault(challenge.section_id, challenge.pk)
    return marks


@require_safe
def claim(request, section_id):
    edition = _edition_or_404()
    record = section_record_get(edition, section_id)
    if record is None:
        raise Http404
    found = _find(_presented(edition), section_id)
    return render(
        request,
        "methodology/claim.html",
        {
            "edition": edition,
            "section_id": section_id,
            "found": found,
            "kind_name": record._meta.verbose_name,
            "challenge_url": challenge_url(section_id),
        },
    )


def _find(view, section_id):
    """The presented record (and the chapter around it) for a section id."""
    for chapter in view["chapters"]:
        if chapter["section_id"] == section_id:
            return {"title": chapter["title"], "detail": chapter["lead"], "chapter": chapter}
        for item in chapter["items"]:
            if item["section_id"] == section_id:
                return {
                    "title": item["term"],
                    "detail": item["detail"],
                    "item": item,
                    "chapter": chapter,
                }
        for group in chapter["groups"]:
            for ref in group["references"]:
                if ref["section_id"] == section_id:
                    return {
                        "title": ref["title"],
                        "detail": ref["borrowed"] or ref["note"],
                        "chapter": chapter,
                    }
    for collection in ("glossary", "register", "kinds"):
        for entry in view[collection]:
            if entry["section_id"] == section_id:
                return {
                    "title": entry.get("term") or entry.get("label"),
                    "detail": entry.get("definition") or entry.get("detail"),
                }
    for section in view["contract"]:
        if section["section_id"] == section_id:
            return {"title": section["title"], "detail": section["lead"]}
        for item in section["items"]:
            if item["section_id"] == section_id:
                return {"title": item["term"] or section["title"], "detail": item["detail"]}
    return {"title": section_id, "detail": ""}


@require_safe
def download(request, slug, language):
    edition = _edition_or_404(slug)
    response = HttpResponse(
        methodology_pack(edition, language), content_type="text/markdown; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{pack_filename(edition, language)}"'
    return response


@require_safe
def edition_list(request):
    editions = list(edition_list_q())
    current = edition_current()
    published = [e for e in editions if e.status == EditionStatus.PUBLISHED]
    rows = []
    for edition in editions:
        standing = edition_standing(edition, current)
        rows.append(
            {"edition": edition, "standing": standing, "label": EDITION_STANDINGS[standing]}
        )
    return render(
        request,
        "methodology/edition_list.html",
        {
            "rows": rows,
            "last_published": published[0] if published else None,
            "preview": current if current and current.status == EditionStatus.DRAFT else None,
        },
    )


@require_safe
def edition_detail(request, slug):
    return _edition_page(request, _edition_or_404(slug), None, archive=True)


@require_safe
def edition_diff_page(request, older, newer):
    language = translation.get_language()
    diff = edition_diff_read(_edition_or_404(older), _edition_or_404(newer), language)
    return render(
        request,
        "methodology/edition_diff.html",
        {"diff": diff, "language": language, "sections": _diff_sections(diff)},
    )


def _diff_sections(diff):
    """(anchor, heading, count) of each part of the diff, for its table of contents."""
    references, markets = diff["references"], diff["market_editions"]
    return [
        ("thresholds", _("Thresholds"), len(diff["thresholds"])),
        ("added", _("Claims added"), len(diff["added"])),
        ("changed", _("Claims changed"), len(diff["changed"])),
        ("retracted", _("Claims retracted"), len(diff["retracted"])),
        ("tasks-added", _("Tasks added"), len(diff["tasks_added"])),
        (
            "tasks-made-current",
            _("Task versions made current"),
            len(diff["tasks_made_current"]),
        ),
        ("tasks-retired", _("Tasks retired"), len(diff["tasks_retired"])),
        ("references", _("References"), sum(len(v) for v in references.values())),
        ("market-editions", _("Market editions"), len(markets)),
    ]
