"""The methodology pack: structured records in, the Markdown document out.

Pure Python (PyYAML only, no Django), so the same renderer serves the YAML in
``content/`` today and a dict built from database records later.

Text fields
-----------
Every human-readable field is a ``{"en": str, "ko": str}`` dict. A plain ``str``
is also accepted anywhere and is then used for both languages. Text may carry
live-fact placeholders ``{{name}}`` (spaces inside the braces are tolerated);
the names are exactly ``PLACEHOLDERS``. Numbers that define the method
("100 ×", "95%", "7 diagnostic axes") are literal text, never placeholders.

Content dict (what ``load_pack_content`` returns and ``render_pack`` reads)
--------------------------------------------------------------------------
::

    {
      "pack": {                                     # pack.yaml
        "title", "generated_from", "intro": Text,
        "status": {"heading": Text,
                   "lines": [{"key": str, "text": Text}]},
        "labels": {"see_refs", "see_link", "borrowed", "not_adopted",
                   "implemented", "planned", "state_separator",
                   "reference_separator": Text},
        "english_pack_korean_appendix": {"register_heading_note": Text},
      },
      "vocabulary": {                               # vocabulary.yaml
        "heading": Text,
        "kinds": [{"kind", "section_id", "label": Text, "definition": Text}],
      },
      "chapters": [                                 # chapters.yaml, in order
        {"number": int, "section_id": str, "title": Text, "lead": Text,
         "in_pack": bool (default True),
         "body": "items" (default) | "policy_register" | "references"
                 | "glossary" | "colophon",
         "items": [                                 # body "items" only
           {"section_id", "type": "claim",  "kind": KIND, "term": Text,
            "detail": Text, "refs": [reference key, ...] (optional)},
           {"section_id", "type": "status", "state": "implemented"|"planned",
            "term": Text, "detail": Text},
           {"section_id", "type": "step", "term": Text, "detail": Text,
            "link": "/path" (optional), "link_label": Text (optional)},
         ]},
      ],
      "reference_groups": [                         # references.yaml "groups"
        {"section_id", "chapter": chapter section_id,
         "title": Text, "intro": Text}              # title/intro optional:
      ],                                            # no ### heading without them
      "references": [                               # references.yaml "references"
        {"key", "section_id", "group": group section_id, "title": Text,
         "subtitle": Text, "url": str,
         # research reference:
         "venue": Text, "borrowed": Text, "not_adopted": Text,
         # publication/interface reference instead:
         "note": Text},
      ],
      "glossary": [{"section_id", "term": Text, "definition": Text}],
      "contract": {                                 # contract.yaml
        "heading": Text,
        "sections": [{"section_id", "number": "3.1" | None, "title": Text,
                      "eyebrow": Text, "lead": Text,   # web page only
                      "numbered": bool (items render as "1.", "2.", ...),
                      "items": [{"section_id", "term": Text (absent when
                                 numbered), "detail": Text}]}],
      },
      "policy_register": [{"section_id", "term": Text, "detail": Text}],
    }

KIND is one of ``current-rule``, ``mica-policy``, ``external-evidence``,
``open-question``; its label comes from ``vocabulary.kinds``.

Contract details may wrap a defined term in ``<dfn>…</dfn>`` (the sentence as
the web page shows it). The English pack drops the wrapped words from the
sentence, exactly as the canonical export does (the term is already the bold
lead-in of the line, so "An eligible run is ..." prints as "**eligible run.**
 is ..."). The Korean pack keeps the words and drops only the tags.

Rendering
---------
``render_pack(content, facts, "en")`` reproduces the canonical English export
byte for byte, including its closing Korean parts (the operational contract in
Korean and the Korean policy register). ``"ko"`` gives the same structure with
every heading, label, claim, note and term in Korean; the Korean contract
appears once (as the closing contract) and the register once (as chapter 16),
with no English appendix. ``facts`` is a flat ``{placeholder: value}`` dict for
the pack's language, or ``{"en": {...}, "ko": {...}}`` so that the Korean parts
of the English pack are filled from the Korean values.
"""

from __future__ import annotations

import re
from pathlib import Path

from mica.bilingual import LANGUAGES
from mica.content.loading import read_yaml

# The counted figures of the prose, in the order pages and exports list them
# (mica.methodology.facts counts them), then the two thresholds the edition sets.
COUNTED_FIGURES = (
    "market_count",
    "market_codes",
    "family_count",
    "canonical_task_count",
    "candidate_task_count",
    "validated_task_count",
    "task_languages",
    "registered_system_count",
    "run_cell_count",
    "publication_eligible",
    "reference_count",
)
PLACEHOLDERS = frozenset(COUNTED_FIGURES) | {"min_eligible_runs", "min_coverage"}

# An accepted correction prints under its claim, in every pack.
CORRECTION_LABEL = {"en": "Correction", "ko": "정정"}

CLAIM_KINDS = ("current-rule", "mica-policy", "external-evidence", "open-question")
STATES = ("implemented", "planned")

CONTENT_FILES = {
    "pack": "pack.yaml",
    "vocabulary": "vocabulary.yaml",
    "chapters": "chapters.yaml",
    "references": "references.yaml",
    "glossary": "glossary.yaml",
    "contract": "contract.yaml",
    "policy_register": "policy_register.yaml",
}

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_DFN = re.compile(r"<dfn>.*?</dfn>", re.DOTALL)
_DFN_TAGS = re.compile(r"</?dfn>")


# ------------------------------------------------------------------ placeholders


def fill_placeholders(text: str, facts: dict) -> str:
    """Replace every ``{{name}}`` whose name is in ``facts``; leave the rest untouched."""

    def swap(match):
        name = match.group(1)
        if name in facts:
            return str(facts[name])
        return match.group(0)

    return _PLACEHOLDER.sub(swap, text)


def placeholders_in(text: str) -> list[str]:
    """Placeholder names used in ``text``, in order of first use."""
    seen = []
    for name in _PLACEHOLDER.findall(text):
        if name not in seen:
            seen.append(name)
    return seen


def unknown_placeholders(text: str) -> list[str]:
    """Names used as ``{{name}}`` in ``text`` that are not in ``PLACEHOLDERS``."""
    return [name for name in placeholders_in(text) if name not in PLACEHOLDERS]


# ------------------------------------------------------------------ loading


def load_pack_content(content_dir) -> dict:
    """Read the methodology YAML files in ``content_dir`` into the content dict."""
    base = Path(content_dir)
    raw = {name: read_yaml(base / filename) for name, filename in CONTENT_FILES.items()}
    references = raw["references"]
    return {
        "pack": raw["pack"],
        "vocabulary": raw["vocabulary"],
        "chapters": raw["chapters"],
        "reference_groups": references["groups"],
        "references": references["references"],
        "glossary": raw["glossary"],
        "contract": raw["contract"],
        "policy_register": raw["policy_register"],
    }


# ------------------------------------------------------------------ checking


def _texts(node, path=""):
    """Yield (path, value) for every text field (bilingual dict or plain string)."""
    if isinstance(node, dict):
        if set(node) == set(LANGUAGES):
            yield path, node
            return
        for key, value in node.items():
            yield from _texts(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _texts(value, f"{path}[{index}]")


def section_ids(content: dict) -> list[str]:
    """Every challengeable record's section_id, in document order."""
    ids = [kind["section_id"] for kind in content["vocabulary"]["kinds"]]
    for chapter in content["chapters"]:
        ids.append(chapter["section_id"])
        ids.extend(item["section_id"] for item in chapter.get("items", []))
    ids.extend(entry["section_id"] for entry in content["policy_register"])
    ids.extend(group["section_id"] for group in content["reference_groups"])
    ids.extend(reference["section_id"] for reference in content["references"])
    ids.extend(entry["section_id"] for entry in content["glossary"])
    for section in content["contract"]["sections"]:
        ids.append(section["section_id"])
        ids.extend(item["section_id"] for item in section["items"])
    return ids


def validate_content(content: dict) -> list[str]:
    """Problems in a content dict (empty list when sound)."""
    problems = []
    for path, value in _texts(content):
        if not isinstance(value, dict):
            continue
        for lang in LANGUAGES:
            text = value.get(lang)
            if not isinstance(text, str) or not text.strip():
                problems.append(f"{path}: no {lang} text")
            else:
                for name in unknown_placeholders(text):
                    problems.append(f"{path}.{lang}: unknown placeholder {{{{{name}}}}}")
    ids = section_ids(content)
    kebab = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
    seen = set()
    for sid in ids:
        if not isinstance(sid, str) or not kebab.match(sid):
            problems.append(f"section_id {sid!r} is not kebab case")
        if sid in seen:
            problems.append(f"section_id {sid!r} is used twice")
        seen.add(sid)
    kinds = {kind["kind"] for kind in content["vocabulary"]["kinds"]}
    if kinds != set(CLAIM_KINDS):
        problems.append(f"vocabulary kinds are {sorted(kinds)}, expected {list(CLAIM_KINDS)}")
    keys = [reference["key"] for reference in content["references"]]
    if len(keys) != len(set(keys)):
        problems.append("reference keys are not unique")
    groups = {group["section_id"] for group in content["reference_groups"]}
    for reference in content["references"]:
        if reference["group"] not in groups:
            problems.append(f"reference {reference['key']}: unknown group {reference['group']}")
    for chapter in content["chapters"]:
        for item in chapter.get("items", []):
            where = f"{chapter['section_id']}/{item['section_id']}"
            if item["type"] == "claim" and item.get("kind") not in CLAIM_KINDS:
                problems.append(f"{where}: kind {item.get('kind')!r}")
            if item["type"] == "status" and item.get("state") not in STATES:
                problems.append(f"{where}: state {item.get('state')!r}")
            for key in item.get("refs", []):
                if key not in keys:
                    problems.append(f"{where}: cites unknown reference {key!r}")
    return problems


# ------------------------------------------------------------------ rendering


def _facts_for(facts: dict, lang: str) -> dict:
    if isinstance(facts.get(lang), dict):
        return facts[lang]
    return facts


class _Writer:
    def __init__(self, facts: dict):
        self.facts = facts
        self.blocks: list[str] = []

    def text(self, value, lang: str) -> str:
        if isinstance(value, dict):
            value = value[lang]
        return fill_placeholders(value, _facts_for(self.facts, lang))

    def block(self, *lines: str):
        self.blocks.append("\n".join(lines))


def _render_vocabulary(w: _Writer, content: dict, lang: str):
    vocabulary = content["vocabulary"]
    w.block(f"## {w.text(vocabulary['heading'], lang)}")
    w.block(
        *(
            f"- **{w.text(kind['label'], lang)}.** {w.text(kind['definition'], lang)}"
            for kind in vocabulary["kinds"]
        )
    )


def _render_items(w: _Writer, content: dict, chapter: dict, lang: str):
    labels = content["pack"]["labels"]
    kind_labels = {kind["kind"]: kind["label"] for kind in content["vocabulary"]["kinds"]}
    runs: list[tuple[str, list[str]]] = []  # consecutive lines of one status state form a block
    for item in chapter.get("items", []):
        term = w.text(item["term"], lang)
        detail = w.text(item["detail"], lang)
        if item["type"] == "claim":
            line = f"- **[{w.text(kind_labels[item['kind']], lang)}] {term}.** {detail}"
            if item.get("refs"):
                line += f" ({w.text(labels['see_refs'], lang)} {', '.join(item['refs'])})"
            for correction in item.get("corrections", []):
                line += (
                    f"\n  - **{CORRECTION_LABEL[lang]} ({correction['date']}).** "
                    f"{w.text(correction['text'], lang)}"
                )
            group = "claim"
        elif item["type"] == "status":
            state = w.text(labels[item["state"]], lang)
            separator = w.text(labels["state_separator"], lang)
            line = f"- **{state}{separator}{term}** {detail}"
            group = item["state"]
        elif item["type"] == "step":
            line = f"- **{term}.** {detail}"
            if item.get("link"):
                line += f" ({w.text(labels['see_link'], lang)} `{item['link']}`)"
            group = "step"
        else:
            raise ValueError(f"Unknown item type {item['type']!r} in {chapter['section_id']}")
        if runs and runs[-1][0] == group:
            runs[-1][1].append(line)
        else:
            runs.append((group, [line]))
    for _group, lines in runs:
        w.block(*lines)


def _render_register(w: _Writer, content: dict, lang: str):
    w.block(
        *(
            f"- **{w.text(entry['term'], lang)}.** {w.text(entry['detail'], lang)}"
            for entry in content["policy_register"]
        )
    )


def _render_references(w: _Writer, content: dict, chapter: dict, lang: str):
    labels = content["pack"]["labels"]
    separator = w.text(labels["reference_separator"], lang)
    for group in content["reference_groups"]:
        if group["chapter"] != chapter["section_id"]:
            continue
        if group.get("title"):
            w.block(f"### {w.text(group['title'], lang)}")
        if group.get("intro"):
            w.block(w.text(group["intro"], lang))
        lines = []
        for reference in content["references"]:
            if reference["group"] != group["section_id"]:
                continue
            head = (
                f"- [{w.text(reference['title'], lang)}]({reference['url']})"
                f"{separator}{w.text(reference['subtitle'], lang)}."
            )
            if "borrowed" in reference:
                lines.append(f"{head} {w.text(reference['venue'], lang)}.")
                lines.append(
                    f"  - {w.text(labels['borrowed'], lang)}: {w.text(reference['borrowed'], lang)}"
                )
                lines.append(
                    f"  - {w.text(labels['not_adopted'], lang)}: "
                    f"{w.text(reference['not_adopted'], lang)}"
                )
            else:
                lines.append(f"{head} {w.text(reference['note'], lang)}")
        if lines:
            w.block(*lines)


def _render_glossary(w: _Writer, content: dict, lang: str):
    w.block(
        *(
            f"- **{w.text(entry['term'], lang)}.** {w.text(entry['definition'], lang)}"
            for entry in content["glossary"]
        )
    )


def _render_chapter(
    w: _Writer, content: dict, chapter: dict, lang: str, heading: str | None = None
):
    w.block(f"## {heading or w.text(chapter['title'], lang)}")
    w.block(w.text(chapter["lead"], lang))
    body = chapter.get("body", "items")
    if body == "items":
        _render_items(w, content, chapter, lang)
    elif body == "policy_register":
        _render_register(w, content, lang)
    elif body == "references":
        _render_references(w, content, chapter, lang)
    elif body == "glossary":
        _render_glossary(w, content, lang)
    elif body != "colophon":
        raise ValueError(f"Unknown chapter body {body!r} in {chapter['section_id']}")


def _render_contract(w: _Writer, content: dict, lang: str, *, keep_defined_terms: bool):
    contract = content["contract"]
    w.block(f"## {w.text(contract['heading'], lang)}")
    for section in contract["sections"]:
        w.block(f"### {w.text(section['title'], lang)}")
        lines = []
        for index, item in enumerate(section["items"], start=1):
            detail = w.text(item["detail"], lang)
            if keep_defined_terms:
                detail = _DFN_TAGS.sub("", detail)
            else:
                detail = _DFN.sub("", detail)
            term = str(index) if section.get("numbered") else w.text(item["term"], lang)
            lines.append(f"- **{term}.** {detail}")
        w.block(*lines)


def render_pack(content: dict, facts: dict, lang: str) -> str:
    """The Markdown methodology pack for ``lang`` ("en" or "ko")."""
    if lang not in LANGUAGES:
        raise ValueError(f"Unknown pack language {lang!r}; expected one of {LANGUAGES}.")
    pack = content["pack"]
    w = _Writer(facts)
    w.block(f"# {w.text(pack['title'], lang)}")
    w.block(w.text(pack["generated_from"], lang))
    w.block(w.text(pack["intro"], lang))
    w.block(f"## {w.text(pack['status']['heading'], lang)}")
    w.block(*(f"- {w.text(line['text'], lang)}" for line in pack["status"]["lines"]))
    _render_vocabulary(w, content, lang)
    chapters = sorted(content["chapters"], key=lambda chapter: chapter["number"])
    for chapter in chapters:
        if chapter.get("in_pack", True):
            _render_chapter(w, content, chapter, lang)
    if lang == "en":
        # Byte-identical to the canonical export: its contract drops <dfn> words, and it
        # closes with the Korean operational contract and the Korean policy register.
        _render_contract(w, content, "en", keep_defined_terms=False)
        _render_contract(w, content, "ko", keep_defined_terms=False)
        register = next(c for c in chapters if c.get("body") == "policy_register")
        note = w.text(pack["english_pack_korean_appendix"]["register_heading_note"], "en")
        heading = f"{w.text(register['title'], 'ko')} ({note})"
        _render_chapter(w, content, register, "ko", heading=heading)
    else:
        # The Korean pack has the register in place (chapter 16) and the contract once;
        # a <dfn> term stays in its sentence, so every line reads as written.
        _render_contract(w, content, lang, keep_defined_terms=True)
    document = "\n\n".join(w.blocks)
    left = placeholders_in(document)
    if left:
        raise ValueError(f"Facts missing for placeholders: {', '.join(left)}")
    return document
