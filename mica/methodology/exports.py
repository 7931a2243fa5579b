"""The Markdown packs of an edition, rendered from its records with live figures."""

from mica.methodology.facts import live_facts
from mica.methodology.pack import render_pack
from mica.methodology.selectors import pack_content


def methodology_pack(edition, language):
    return render_pack(pack_content(edition), live_facts(edition), language)


def pack_filename(edition, language):
    return f"mica-methodology-{edition.slug}.{language}.md"
