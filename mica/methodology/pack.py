"""The methodology pack: structured records in, the Markdown document out.

Pure Python (PyYAML only, no Django), so the same renderer serves the YAML in
``content/`` today and a dict built from database records later.

Text fields
-----------
Every human-readable field is a ``{"en": str, "ko": str}`` dict. A plain ``str``
is also accepted anywhere and is then used for both languages. Text may carry
live-fact placeholders ``{{name}}`` (spaces inside the braces are tolerated);
the names are exactly ``PLACEHOLDERS``. ``{{name|words}}`` / ``{{name|Words}}``
write a count in English words ("ten", "Six"), and ``{{name|plural:one,other}}``
the form that agrees with it ("1 is validated", "2 are validated"). A sentence
whose meaning turns on a state of the records (a threshold set or not) is
``{{#if state}}…{{else}}…{{/if}}``, nestable, with the states of ``CONDITIONS``.
Numbers that define the method ("100 ×", "95%", "7 diagnostic axes") are
literal text, never placeholders; every number that counts records or states a
threshold, a date or a status is one.

Content dict (what ``load_pack_content`` returns and ``render_pack`` reads)
--------------------------------------------------------------------------
::

    {
      "pack": {                                     # pack.yaml
        "title", "generated_from", "intro": Text,
        "header": {"eyebrow", "title", "lead", "figures", "download_label",
                   "download_note": Text},          # the page's header (seed 001)
        "colophon": {"references": Text,            # chapter 20's lines
                     "governance": {"label": Text, "link": "/path"}},
        "status": {"heading": Text,
                   "lines": [{"key": str, "text": Text}]},
        "labels": {"see_refs", "see_link", "borrowed", "not_adopted",
                   "implemented", "planned", "state_separator",
                   "reference_separator": Text},
        "english_pack_korean_appendix": {"register_heading_note": Text},
        "korean_document": {                        # what the Korean pack leaves to
          "leave_out": [section_id, ...],           # the page (contract sections,
          "as_paragraph": [item section_id, ...],   # reference groups), items it sets
          "formulas": [{"item", "formula": str}]},  # as paragraphs, formulas apart
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
                      "eyebrow": Text, "lead": Text,   # page and Korean pack
                      "numbered": bool | {"en": bool, "ko": bool} (items
                                  render as "1.", "2.", ...; the English pack
                                  numbers where the English does, the page and
                                  the Korean pack per language),
                      "items": [{"section_id", "term": Text (absent when
                                 numbered in English), "detail": Text}]}],
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
byte for byte (seed 000), including its closing Korean parts (the operational
contract in Korean and the Korean policy register); ``in_pack: false`` chapters
are left out of it. ``"ko"`` is the Korean page as a document (seed 001): the
page's header, the status list, the vocabulary, then all twenty chapters
numbered ("## 3 …"), each followed by its contract subsections with their small
labels ("*관문*", "### 3.1 공개 규칙", the lead, the items), the references as the
page shows them ("차용한 점 …"), and chapter 20's lines. It prints what seed 001
prints, line for line: terms closed by one full stop as the page closes them
(never doubled), lists numbered or bulleted as seed 001 has them, no citation keys, and
none of the page's own additions (``korean_document.leave_out``). It names its
source truthfully (the page's download), not the English export's source line.
``facts`` is a flat ``{placeholder: value}`` dict for the pack's language, or
``{"en": {...}, "ko": {...}}`` so that the Korean parts of the English pack are
filled from the Korean values; states are booleans in the same dicts.
"""

from __future__ import annotations

import re
from pathlib import Path

from mica.bilingual import LANGUAGES
from mica.content.loading import read_yaml

# The counted figures of the prose, in the order pages and exports list them
# (mica.methodology.facts counts them), then what the edition itself states.
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
    # A market edition's profile minimums (markets.services.coverage_audit's).
    "min_situations",
    "min_surfaces",
    "min_authorization_boundaries",
    "min_completion_semantics",
    "min_recovery_conditions",
    "min_evidence_types",
)
# The edition's four publication thresholds (seed 000: "runs per task, a minimum cell
# sample size, task coverage, or a maximum ineligible discard rate") and its review cutoff.
THRESHOLDS = ("min_eligible_runs", "min_coverage", "runs_per_task", "max_ineligible_discard_rate")
EDITION_FIGURES = (*THRESHOLDS, "review_cutoff", "edition_label", "pack_path")
PLACEHOLDERS = frozenset(COUNTED_FIGURES) | frozenset(EDITION_FIGURES)
# The states a sentence can turn on, as ``{{#if name}}…{{else}}…{{/if}}``: where a figure
# changes what the sentence says ("Not set. MICA has not agreed …" against "30. …"),
# not only which number it prints.
CONDITIONS = frozenset(
    {
        *(f"{name}_set" for name in THRESHOLDS),
        "thresholds_set",  # all four
        "thresholds_unset",  # none of the four
        "gate_values_unset",  # neither the minimum sample size nor the minimum coverage
        "review_cutoff_set",
        "all_tasks_candidates",  # every public definition is a provisional candidate
        "edition_draft",
    }
)
# ``{{name|filter}}``: a count written as English words ("ten", "Six"), or the form of a
# word that agrees with it (``{{n|plural:is,are}}``: "1 is validated", "2 are validated").
FILTERS = ("words", "Words", "plural")

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
_BLOCK = re.compile(r"\{\{\s*(#if\s+[^{}]*?|else|/if)\s*\}\}")
_DFN = re.compile(r"<dfn>.*?</dfn>", re.DOTALL)
_DFN_TAGS = re.compile(r"</?dfn>")

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


# ------------------------------------------------------------------ placeholders


def number_words(number: int) -> str:
    """An English count in words, as the seed writes one ("ten evaluation families");
    from 100 on in digits, as English prose would."""
    if number < 0 or number >= 100:
        return str(number)
    if number < 20:
        return _ONES[number]
    tens, ones = divmod(number, 10)
    return _TENS[tens - 2] + (f"-{_ONES[ones]}" if ones else "")


def _filtered(value, filters):
    text = str(value)
    for name, _colon, argument in (f.partition(":") for f in filters):
        count = int(text) if text.isdigit() else None
        if name in ("words", "Words") and count is not None:
            text = number_words(count)
            text = text[:1].upper() + text[1:] if name == "Words" else text
        elif name == "plural":
            one, _comma, other = argument.partition(",")
            text = one if count == 1 else other
    return text


def _parse_blocks(text):
    """Text -> nodes: strings and ("if", name, then-nodes, else-nodes, raw source)."""
    root, stack = [], []
    nodes, at = root, 0
    for match in _BLOCK.finditer(text):
        nodes.append(text[at : match.start()])
        at = match.end()
        token = match.group(1)
        if token.startswith("#if"):
            block = {"name": token[3:].strip(), "then": [], "else": [], "start": match.start()}
            stack.append((block, nodes))
            nodes.append(block)
            nodes = block["then"]
        elif not stack:
            raise ValueError(f"{{{{{token}}}}} without an opening {{{{#if …}}}}")
        elif token == "else":
            nodes = stack[-1][0]["else"]
        else:
            block, nodes = stack.pop()
            block["raw"] = text[block["start"] : match.end()]
    if stack:
        raise ValueError(f"{{{{#if {stack[-1][0]['name']}}}}} is never closed with {{{{/if}}}}")
    nodes.append(text[at:])
    return root


def _render_blocks(nodes, facts):
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node["name"] in facts:
            out.append(_render_blocks(node["then"] if facts[node["name"]] else node["else"], facts))
        else:
            out.append(node["raw"])  # a state nobody gave stays visible, like a figure
    return "".join(out)


def fill_placeholders(text: str, facts: dict) -> str:
    """Resolve every ``{{#if state}}…{{else}}…{{/if}}`` and replace every ``{{name}}``
    (with its filters) whose name is in ``facts``; leave the rest untouched."""
    if "{{" not in text:
        return text
    try:
        text = _render_blocks(_parse_blocks(text), facts)
    except ValueError:
        pass  # unbalanced: shown as written, and refused where editors save (services)

    def swap(match):
        name, *filters = (part.strip() for part in match.group(1).split("|"))
        if name in facts and not isinstance(facts[name], bool):
            return _filtered(facts[name], filters)
        return match.group(0)

    return _PLACEHOLDER.sub(swap, text)


def placeholders_in(text: str) -> list[str]:
    """Placeholder names (and ``#if`` states) used in ``text``, in order of first use."""
    seen = []
    for token in _PLACEHOLDER.findall(text):
        if token in ("else", "/if"):
            continue
        name = token[3:].strip() if token.startswith("#if") else token.split("|")[0].strip()
        if name not in seen:
            seen.append(name)
    return seen


def _token_problem(token, figures, conditions):
    if token in ("else", "/if"):
        return None
    if token.startswith("#if"):
        name = token[3:].strip()
        return None if name in conditions else name
    name, *filters = (part.strip() for part in token.split("|"))
    if name not in figures:
        return name
    for spec in filters:
        if spec.partition(":")[0] not in FILTERS:
            return f"{name}|{spec}"
    return None


def unknown_placeholders(text: str, figures=PLACEHOLDERS, conditions=CONDITIONS) -> list[str]:
    """What ``text`` uses as ``{{…}}`` that is no known figure (of ``figures``), state or
    filter, and any ``{{#if}}`` left unbalanced."""
    unknown = []
    for token in _PLACEHOLDER.findall(text):
        problem = _token_problem(token, figures, conditions)
        if problem is not None and problem not in unknown:
            unknown.append(problem)
    try:
        _parse_blocks(text)
    except ValueError as error:
        unknown.append(str(error))
    return unknown


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


# Fields that may hold a value per language without being text.
FLAGS = frozenset({"numbered"})


def _texts(node, path=""):
    """Yield (path, value) for every text field (bilingual dict or plain string)."""
    if isinstance(node, dict):
        if set(node) == set(LANGUAGES):
            yield path, node
            return
        for key, value in node.items():
            if key in FLAGS:
                continue
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


def full_stop(term: str) -> str:
    """A term as a run-in heading, closed by one full stop: a term that already ends in
    one ("성공한 과제 없음.") gets no second (as the page's ``full_stop`` filter)."""
    return term if term.rstrip().endswith((".", "?", "!")) else f"{term}."


def _lead_in(term: str, page: bool) -> str:
    """A line's bold lead-in, closed by a full stop: always in the canonical export (seed
    000, "**Current rule.**"); in the Korean document as the page closes it, never doubled
    ("**성공한 과제 없음.**")."""
    return f"**{full_stop(term)}**" if page else f"**{term}.**"


def korean_document(content: dict) -> dict:
    """What the Korean document leaves to the page, and how it sets items seed 001 sets
    apart (pack.yaml ``korean_document``)."""
    settings = content["pack"].get("korean_document") or {}
    return {
        "leave_out": set(settings.get("leave_out") or ()),
        "as_paragraph": set(settings.get("as_paragraph") or ()),
        "formulas": {entry["item"]: entry["formula"] for entry in settings.get("formulas") or ()},
    }


def _render_vocabulary(w: _Writer, content: dict, lang: str, *, page: bool = False):
    vocabulary = content["vocabulary"]
    w.block(f"## {w.text(vocabulary['heading'], lang)}")
    w.block(
        *(
            f"- {_lead_in(w.text(kind['label'], lang), page)} {w.text(kind['definition'], lang)}"
            for kind in vocabulary["kinds"]
        )
    )


def _render_items(w: _Writer, content: dict, chapter: dict, lang: str, *, page: bool = False):
    labels = content["pack"]["labels"]
    kind_labels = {kind["kind"]: kind["label"] for kind in content["vocabulary"]["kinds"]}
    runs: list[tuple[str, list[str]]] = []  # consecutive lines of one status state form a block
    for item in chapter.get("items", []):
        term = w.text(item["term"], lang)
        detail = w.text(item["detail"], lang)
        if item["type"] == "claim":
            kind = w.text(kind_labels[item["kind"]], lang)
            line = f"- {_lead_in(f'[{kind}] {term}', page)} {detail}"
            # The page links its citations; seed 001 prints none, so the document neither.
            if item.get("refs") and not page:
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
            line = f"- {_lead_in(term, page)} {detail}"
            if item.get("link") and page:
                # The page's link, under the label the page shows (seed 001: "제출 요건 안내").
                label = w.text(item["link_label"], lang) if item.get("link_label") else item["link"]
                line += f" [{label}]({item['link']})"
            elif item.get("link"):
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


def _render_register(w: _Writer, content: dict, lang: str, *, page: bool = False):
    w.block(
        *(
            f"- {_lead_in(w.text(entry['term'], lang), page)} {w.text(entry['detail'], lang)}"
            for entry in content["policy_register"]
        )
    )


def _reference_lines(w: _Writer, labels: dict, reference: dict, lang: str, separator: str):
    """The canonical export's lines of one reference: "[Title](url) — Subtitle. Venue."."""
    head = (
        f"- [{w.text(reference['title'], lang)}]({reference['url']})"
        f"{separator}{w.text(reference['subtitle'], lang)}."
    )
    if "borrowed" not in reference:
        return [f"{head} {w.text(reference['note'], lang)}"]
    return [
        f"{head} {w.text(reference['venue'], lang)}.",
        f"  - {w.text(labels['borrowed'], lang)}: {w.text(reference['borrowed'], lang)}",
        f"  - {w.text(labels['not_adopted'], lang)}: {w.text(reference['not_adopted'], lang)}",
    ]


def _reference_page_lines(w: _Writer, labels: dict, reference: dict, lang: str):
    """One reference as the page shows it (seed 001: "WebArena: A Realistic … Agents ICLR
    2024", then "차용한 점 …" and "채택하지 않은 점 …" under it)."""
    head = f"- [{w.text(reference['title'], lang)}]({reference['url']})"
    if reference.get("subtitle"):
        head += f": {w.text(reference['subtitle'], lang)}"
    if reference.get("venue"):
        head += f" *{w.text(reference['venue'], lang)}*"
    lines = [head]
    for field in ("borrowed", "not_adopted"):
        if reference.get(field):
            lines.append(f"  - **{w.text(labels[field], lang)}** {w.text(reference[field], lang)}")
    if reference.get("note"):
        lines.append(f"  - {w.text(reference['note'], lang)}")
    return lines


def _render_references(w: _Writer, content: dict, chapter: dict, lang: str, *, page: bool = False):
    labels = content["pack"]["labels"]
    separator = w.text(labels["reference_separator"], lang)
    leave_out = korean_document(content)["leave_out"] if page else set()
    for group in content["reference_groups"]:
        if group["chapter"] != chapter["section_id"] or group["section_id"] in leave_out:
            continue
        if group.get("title"):
            w.block(f"### {w.text(group['title'], lang)}")
        if group.get("intro"):
            w.block(w.text(group["intro"], lang))
        lines = []
        for reference in content["references"]:
            if reference["group"] != group["section_id"]:
                continue
            if page:
                lines.extend(_reference_page_lines(w, labels, reference, lang))
            else:
                lines.extend(_reference_lines(w, labels, reference, lang, separator))
        if lines:
            w.block(*lines)


def _render_glossary(w: _Writer, content: dict, lang: str, *, page: bool = False):
    w.block(
        *(
            f"- {_lead_in(w.text(entry['term'], lang), page)} {w.text(entry['definition'], lang)}"
            for entry in content["glossary"]
        )
    )


def _render_colophon(w: _Writer, content: dict, lang: str):
    """Chapter 20's three lines (seed 001: "수록 레퍼런스 56", the download, "이 모든 것을
    누가 정하는가 →")."""
    pack = content["pack"]
    header, colophon = pack.get("header"), pack.get("colophon")
    if not (header and colophon):
        return
    governance = colophon["governance"]
    w.block(
        f"- {w.text(colophon['references'], lang)}",
        f"- [{w.text(header['download_label'], lang)}]({w.text('{{pack_path}}', lang)})",
        f"- [{w.text(governance['label'], lang)}]({governance['link']})",
    )


def _render_chapter(
    w: _Writer,
    content: dict,
    chapter: dict,
    lang: str,
    heading: str | None = None,
    *,
    page: bool = False,
):
    w.block(f"## {heading or w.text(chapter['title'], lang)}")
    w.block(w.text(chapter["lead"], lang))
    body = chapter.get("body", "items")
    if body == "items":
        _render_items(w, content, chapter, lang, page=page)
    elif body == "policy_register":
        _render_register(w, content, lang, page=page)
    elif body == "references":
        _render_references(w, content, chapter, lang, page=page)
    elif body == "glossary":
        _render_glossary(w, content, lang, page=page)
    elif body == "colophon":
        if page:
            _render_colophon(w, content, lang)
    else:
        raise ValueError(f"Unknown chapter body {body!r} in {chapter['section_id']}")


def numbered_in(section, language):
    """Whether a contract section numbers its items in `language` (a pack may say it for
    both languages at once, as `true`)."""
    numbered = section.get("numbered", False)
    return bool(numbered.get(language)) if isinstance(numbered, dict) else bool(numbered)


def _contract_lines(w: _Writer, section: dict, lang: str, *, keep_defined_terms: bool):
    lines = []
    for index, item in enumerate(section["items"], start=1):
        detail = w.text(item["detail"], lang)
        detail = _DFN_TAGS.sub("", detail) if keep_defined_terms else _DFN.sub("", detail)
        # The English pack numbers as seed 000 does in both its languages: where the
        # English does. The Korean document numbers as seed 001 does (_page_section_blocks).
        term = str(index) if numbered_in(section, "en") else w.text(item["term"], lang)
        lines.append(f"- **{term}.** {detail}")
    return lines


def _render_contract(w: _Writer, content: dict, lang: str, *, keep_defined_terms: bool):
    contract = content["contract"]
    w.block(f"## {w.text(contract['heading'], lang)}")
    for section in contract["sections"]:
        w.block(f"### {w.text(section['title'], lang)}")
        w.block(*_contract_lines(w, section, lang, keep_defined_terms=keep_defined_terms))


def _section_number(section: dict):
    """ "8.3" -> (8, 3); None for a section no chapter numbers."""
    parts = (section.get("number") or "").split(".")
    if len(parts) == 2 and all(part.isdigit() for part in parts):
        return int(parts[0]), int(parts[1])
    return None


def contract_by_chapter(content: dict) -> tuple[dict, list]:
    """The contract's sections placed as the page places them: {chapter number: [sections
    in number order]} for "3.1" … "15.1" (seed 001: 3.1 closes chapter 3), and the
    sections no chapter of the edition numbers, in the contract's order."""
    chapters = {chapter["number"] for chapter in content["chapters"]}
    placed: dict[int, list] = {}
    unplaced = []
    for section in content["contract"]["sections"]:
        number = _section_number(section)
        if number and number[0] in chapters:
            placed.setdefault(number[0], []).append(section)
        else:
            unplaced.append(section)
    for sections in placed.values():
        sections.sort(key=_section_number)
    return placed, unplaced


def _page_section_blocks(w: _Writer, section: dict, lang: str, document: dict) -> list[str]:
    """A subsection's items as seed 001 sets them: numbered where it numbers them ("1.
    **언어와 격식** …"), bulleted where it bullets them ("- 시뮬레이터 결과는 …"), terms
    as lead-ins; an item whose detail defines its term (<dfn>), or that seed 001 gives
    without its term, as a paragraph of its own; a formula on its own line."""
    blocks: list[str] = []
    lines: list[str] = []
    numbered = numbered_in(section, lang)
    for index, item in enumerate(section["items"], start=1):
        raw = w.text(item["detail"], lang)
        detail = _DFN_TAGS.sub("", raw)
        if _DFN.search(raw) or item["section_id"] in document["as_paragraph"]:
            if lines:
                blocks.append("\n".join(lines))
                lines = []
            blocks.append(detail)
            continue
        marker = f"{index}." if numbered else "-"
        term = w.text(item["term"], lang) if item.get("term") else ""
        formula = document["formulas"].get(item["section_id"])
        if term and formula and detail.startswith(formula):
            indent = " " * (len(marker) + 1)
            rest = detail[len(formula) :].strip()
            lines.append(f"{marker} {_lead_in(term, True)}\n\n{indent}{formula}\n\n{indent}{rest}")
        elif term:
            lines.append(f"{marker} {_lead_in(term, True)} {detail}")
        else:
            lines.append(f"{marker} {detail}")
    if lines:
        blocks.append("\n".join(lines))
    return blocks


def _render_page_section(w: _Writer, section: dict, lang: str, document: dict):
    """A subsection as the page shows it: its small label, "3.1 공개 규칙", the lead, items."""
    if section.get("eyebrow"):
        w.block(f"*{w.text(section['eyebrow'], lang)}*")
    number = f"{section['number']} " if section.get("number") else ""
    w.block(f"### {number}{w.text(section['title'], lang)}")
    if section.get("lead"):
        w.block(w.text(section["lead"], lang))
    for block in _page_section_blocks(w, section, lang, document):
        w.block(block)


def _render_page_header(w: _Writer, content: dict, lang: str):
    """Seed 001's header: "방법론 초안", the title, three lead sentences, the edition,
    "6개 시장 · 10개 과제 계열 · …", the intro and where the document comes from."""
    pack = content["pack"]
    header = pack.get("header")
    if not header:
        w.block(w.text(pack["intro"], lang))
        return
    w.block(w.text(header["eyebrow"], lang))
    w.block(f"**{w.text(header['title'], lang)}**")
    w.block(w.text(header["lead"], lang))
    w.block(w.text("{{edition_label}}", lang))
    w.block(w.text(header["figures"], lang))
    w.block(w.text(pack["intro"], lang))
    w.block(
        f"[{w.text(header['download_label'], lang)}]({w.text('{{pack_path}}', lang)}) "
        f"{w.text(header['download_note'], lang)}"
    )


def _render_export(w: _Writer, content: dict):
    """The canonical English export, byte for byte (seed 000): the status list, the
    chapters without numbers, then the contract in English and Korean and the Korean
    register."""
    pack = content["pack"]
    w.block(w.text(pack["generated_from"], "en"))
    w.block(w.text(pack["intro"], "en"))
    w.block(f"## {w.text(pack['status']['heading'], 'en')}")
    w.block(*(f"- {w.text(line['text'], 'en')}" for line in pack["status"]["lines"]))
    _render_vocabulary(w, content, "en")
    chapters = sorted(content["chapters"], key=lambda chapter: chapter["number"])
    for chapter in chapters:
        if chapter.get("in_pack", True):
            _render_chapter(w, content, chapter, "en")
    # Its contract drops <dfn> words, and it closes with the Korean operational
    # contract and the Korean policy register.
    _render_contract(w, content, "en", keep_defined_terms=False)
    _render_contract(w, content, "ko", keep_defined_terms=False)
    register = next(c for c in chapters if c.get("body") == "policy_register")
    note = w.text(pack["english_pack_korean_appendix"]["register_heading_note"], "en")
    heading = f"{w.text(register['title'], 'ko')} ({note})"
    _render_chapter(w, content, register, "ko", heading=heading)


def _render_page_document(w: _Writer, content: dict, lang: str):
    """The page as a document (seed 001): its header, the status list, the vocabulary,
    then every chapter numbered, each with its subsections ("3.1 공개 규칙") after its
    own items, down to chapter 20."""
    pack = content["pack"]
    _render_page_header(w, content, lang)
    w.block(f"## {w.text(pack['status']['heading'], lang)}")
    w.block(*(f"- {w.text(line['text'], lang)}" for line in pack["status"]["lines"]))
    _render_vocabulary(w, content, lang, page=True)
    document = korean_document(content)
    placed, unplaced = contract_by_chapter(content)
    for chapter in sorted(content["chapters"], key=lambda chapter: chapter["number"]):
        heading = f"{chapter['number']} {w.text(chapter['title'], lang)}"
        _render_chapter(w, content, chapter, lang, heading=heading, page=True)
        for section in placed.get(chapter["number"], []):
            if section["section_id"] not in document["leave_out"]:
                _render_page_section(w, section, lang, document)
    unplaced = [s for s in unplaced if s["section_id"] not in document["leave_out"]]
    if unplaced:
        w.block(f"## {w.text(content['contract']['heading'], lang)}")
        for section in unplaced:
            _render_page_section(w, section, lang, document)


def render_pack(content: dict, facts: dict, lang: str) -> str:
    """The Markdown methodology pack for ``lang`` ("en" or "ko")."""
    if lang not in LANGUAGES:
        raise ValueError(f"Unknown pack language {lang!r}; expected one of {LANGUAGES}.")
    w = _Writer(facts)
    w.block(f"# {w.text(content['pack']['title'], lang)}")
    if lang == "en":
        _render_export(w, content)
    else:
        _render_page_document(w, content, lang)
    document = "\n\n".join(w.blocks)
    left = placeholders_in(document)
    if left:
        raise ValueError(f"Facts missing for placeholders: {', '.join(left)}")
    return document
