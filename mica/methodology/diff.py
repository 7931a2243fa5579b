"""What changed between two editions: the thresholds, the claims (matched by stable section
id), the tasks, the references and what the floors above hold per edition (the market
editions), each change headed by its title in both languages."""

import datetime
import difflib
from decimal import Decimal
from functools import cache

from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext, override
from markdown_it import MarkdownIt

from mica.bilingual import LANGUAGES, field_pair
from mica.methodology.extensions import edition_records_registered
from mica.methodology.facts import live_facts
from mica.methodology.models import ChapterItem, ClaimKind, Edition, EditionStatus, Reference
from mica.methodology.pack import THRESHOLDS
from mica.methodology.presenters import Reader
from mica.methodology.selectors import edition_current
from mica.methodology.services import edition_task_catalogue

TEXT_FIELDS = ("term_en", "term_ko", "detail_en", "detail_ko", "kind")

LANGUAGE_NAMES = {"en": gettext_lazy("English"), "ko": gettext_lazy("Korean")}

# What an edition is, as the edition list and the diff say it. A draft the site reads
# because nothing is published yet is a preview of the method, not a published edition.
EDITION_STANDINGS = {
    "preview": gettext_lazy(
        "Preview: a draft, not a published edition. The site shows it until an edition "
        "is published."
    ),
    "draft": gettext_lazy("Draft, not published yet"),
    "published": gettext_lazy("Published"),
    "superseded": gettext_lazy("Superseded by a later published edition"),
}

# The unit each threshold is stated in (mica.scoring.Thresholds).
THRESHOLD_UNITS = {
    "min_eligible_runs": "runs",
    "min_coverage": "percent",
    "runs_per_task": "runs",
    "max_ineligible_discard_rate": "percent",
}

# Reference fields a reader or a citation reads; the order the diff lists them in.
REFERENCE_FIELDS = (
    "title",
    "subtitle",
    "url",
    "venue",
    "borrowed",
    "not_adopted",
    "note",
    "accessed_on",
    "work_type",
    "work_title",
    "authors",
    "organisation_authors",
    "issued",
    "container_title",
    "publisher",
    "volume",
    "issue",
    "page",
    "number",
)


def bilingual(text, style=str):
    """A translatable text (a verbose name, a choice label) in every language."""
    result = {}
    for lang in LANGUAGES:
        with override(lang):
            result[lang] = style(str(text))
    return result


# --- Editions: what each one is -----------------------------------------------------


def edition_standing(edition, current):
    """ "preview", "draft", "published" or "superseded" (EDITION_STANDINGS)."""
    if edition.status == EditionStatus.DRAFT:
        is_read = current is not None and current.pk == edition.pk
        return "preview" if is_read else "draft"
    return edition.status


def _edition_entry(edition, current):
    standing = edition_standing(edition, current)
    return {
        "slug": edition.slug,
        "label": field_pair(edition, "version_label"),
        "status": edition.status,
        "published_on": edition.published_on.isoformat() if edition.published_on else None,
        "standing": standing,
        "standing_label": bilingual(EDITION_STANDINGS[standing]),
    }


# --- Records as the diff compares them ------------------------------------------------


@cache
def _field_label(model, name, language=None):
    """{en, ko} label of a model field; of one language's column when `language` is given."""
    verbose = model._meta.get_field(name).verbose_name
    labels = {}
    for lang in LANGUAGES:
        with override(lang):
            label = capfirst(str(verbose))
            if language:
                label = _("%(field)s (%(language)s)") % {
                    "field": label,
                    "language": LANGUAGE_NAMES[language],
                }
            labels[lang] = label
    return labels


def _stored(value):
    """A value as the JSON diff carries it (dates as ISO 8601, decimals as strings)."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


@cache
def _translated(model, name):
    names = {f.name for f in model._meta.get_fields()}
    return all(f"{name}_{lang}" in names for lang in LANGUAGES)


def _codes_read(codes, choices):
    """Vocabulary codes as their labels, in every language."""
    labels = dict(choices)
    result = {}
    for lang in LANGUAGES:
        with override(lang):
            result[lang] = ", ".join(str(labels.get(code, code)) for code in codes)
    return result


def _field_values(instance, name, vocabulary=None):
    model = type(instance)
    if _translated(model, name):
        return {
            f"{name}_{lang}": {
                "label": _field_label(model, name, lang),
                "language": lang,
                "value": getattr(instance, f"{name}_{lang}") or "",
            }
            for lang in LANGUAGES
        }
    field = model._meta.get_field(name)
    value = getattr(instance, field.attname)
    entry = {"label": _field_label(model, name), "language": None, "value": _stored(value)}
    if field.choices:
        entry["reads"] = bilingual(dict(field.flatchoices).get(value, value))
    elif vocabulary is not None:
        entry["reads"] = _codes_read(value or [], vocabulary)
    return {name: entry}


def diff_record(*, key, kind, title, instance=None, fields=(), vocabularies=None, extra=None):
    """One record as the edition diff compares it: a key that matches it across editions,
    its kind and title in both languages, and each field's label and stored value.

    `fields` are field names of `instance` (a translated field compares each language's
    column); `vocabularies` maps a field holding a list of codes to their choices, so it
    reads as labels; `extra` adds {name: (label, value)} that no single field holds.
    """
    compared = {}
    for name in fields:
        compared.update(_field_values(instance, name, (vocabularies or {}).get(name)))
    for name, (label, value) in (extra or {}).items():
        compared[name] = {"label": bilingual(label), "language": None, "value": _stored(value)}
    return {"key": key, "kind": kind, "title": title, "fields": compared}


def _heading(record):
    return {"key": record["key"], "kind": record["kind"], "title": record["title"]}


def _changed_fields(before, after):
    names = list(after["fields"]) + [n for n in before["fields"] if n not in after["fields"]]
    changed = []
    for name in names:
        old, new = before["fields"].get(name), after["fields"].get(name)
        if (old or {}).get("value") == (new or {}).get("value"):
            continue
        described = new or old
        changed.append(
            {
                "name": name,
                "label": described["label"],
                "language": described["language"],
                "before": (old or {}).get("value"),
                "after": (new or {}).get("value"),
                **{
                    f"reads_{side}": entry["reads"]
                    for side, entry in (("before", old), ("after", new))
                    if entry and "reads" in entry
                },
            }
        )
    return changed


def records_diff(before, after):
    """{"added", "changed", "removed"} between two lists of diff_record, matched by key."""
    old = {record["key"]: record for record in before}
    new = {record["key"]: record for record in after}
    changed = []
    for key, record in new.items():
        if key in old:
            fields = _changed_fields(old[key], record)
            if fields:
                changed.append({**_heading(record), "fields": fields})
    return {
        "added": [_heading(record) for key, record in new.items() if key not in old],
        "changed": changed,
        "removed": [_heading(record) for key, record in old.items() if key not in new],
    }


def _groups_diff(before, after):
    """Groups (a market's edition) added, removed or holding a changed record."""
    old = {group["key"]: group for group in before}
    new = {group["key"]: group for group in after}
    result = []
    for key in [*new, *(k for k in old if k not in new)]:
        group = new.get(key) or old[key]
        if key not in old or key not in new:
            state = "added" if key in new else "removed"
            changes = records_diff([], [])
        else:
            state = "changed"
            changes = records_diff(old[key]["records"], new[key]["records"])
            if not any(changes.values()):
                continue
        result.append({"key": key, "title": group["title"], "state": state, **changes})
    return result


# --- The parts of the diff ------------------------------------------------------------


def _claims(edition):
    return {item.section_id: item for item in ChapterItem.objects.filter(edition=edition)}


def _claims_diff(older, newer):
    before, after = _claims(older), _claims(newer)
    changed = []
    for section_id in sorted(set(before) & set(after)):
        fields = [
            f
            for f in TEXT_FIELDS
            if getattr(before[section_id], f) != getattr(after[section_id], f)
        ]
        if fields:
            changed.append(
                {
                    "section_id": section_id,
                    "title": field_pair(after[section_id], "term"),
                    "fields": fields,
                    "before": _text(before[section_id]),
                    "after": _text(after[section_id]),
                }
            )
    return {
        "added": [_text(after[s]) for s in sorted(set(after) - set(before))],
        "changed": changed,
        "retracted": [_text(before[s]) for s in sorted(set(before) - set(after))],
    }


def _number(value):
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _thresholds_diff(older, newer):
    """The thresholds set, changed or unset: title, unit, and the value before and after
    (null: not set)."""
    changed = []
    for name in THRESHOLDS:
        before, after = getattr(older, name), getattr(newer, name)
        if before != after:
            changed.append(
                {
                    "name": name,
                    "title": _field_label(Edition, name),
                    "unit": THRESHOLD_UNITS[name],
                    "before": _number(before),
                    "after": _number(after),
                }
            )
    return changed


def _task_diff(older, newer):
    """Tasks added to and retired from the catalogue between the two editions, and those
    whose version in force changed (a new version made current)."""
    before = {t["slug"]: t for t in edition_task_catalogue(older)}
    after = {t["slug"]: t for t in edition_task_catalogue(newer)}
    made_current = [
        {**task, "version_before": before[slug]["version"], "version_after": task["version"]}
        for slug, task in after.items()
        if slug in before and before[slug]["version"] != task["version"]
    ]
    return {
        "tasks_added": [after[s] for s in after if s not in before],
        "tasks_made_current": made_current,
        "tasks_retired": [before[s] for s in before if s not in after],
    }


def reference_records(edition):
    """The edition's references as the diff compares them, matched by key."""
    kind = bilingual(Reference._meta.verbose_name, capfirst)
    return [
        diff_record(
            key=reference.key,
            kind=kind,
            title=field_pair(reference, "title"),
            instance=reference,
            fields=REFERENCE_FIELDS,
        )
        for reference in Reference.objects.filter(edition=edition).order_by("position", "pk")
    ]


def edition_diff(older, newer):
    """Every change from `older` to `newer`, each headed by its title in both languages;
    empty lists where nothing changed."""
    current = edition_current()
    records = edition_records_registered()
    return {
        "from": older.slug,
        "to": newer.slug,
        "editions": {"from": _edition_entry(older, current), "to": _edition_entry(newer, current)},
        "thresholds": _thresholds_diff(older, newer),
        **_claims_diff(older, newer),
        **_task_diff(older, newer),
        "references": records_diff(reference_records(older), reference_records(newer)),
        **{part: _groups_diff(read(older), read(newer)) for part, read in records.items()},
    }


def _text(item):
    return {
        "section_id": item.section_id,
        "kind": item.kind,
        "title": field_pair(item, "term"),
        "term": {"en": item.term_en, "ko": item.term_ko},
        "detail": {"en": item.detail_en, "ko": item.detail_ko},
    }


# --- The diff as a reader reads it ------------------------------------------------------

# Raw HTML off: a stored "<script>" stays a run of text, escaped where the page prints it.
_MARKDOWN = MarkdownIt("commonmark", {"html": False})
_READ_AS_TEXT = {"text", "text_special", "code_inline"}
_READ_AS_SPACE = {"softbreak", "hardbreak"}


def reading_text(reader, text):
    """The words a reader reads: figures filled in, Markdown marks dropped, spaces single."""
    parts = []
    for token in _MARKDOWN.parseInline(reader.plain(text)):
        for child in token.children or ():
            if child.type in _READ_AS_TEXT:
                parts.append(child.content)
            elif child.type in _READ_AS_SPACE:
                parts.append(" ")
    return " ".join("".join(parts).split())


def word_changes(before, after):
    """`after` against `before`, word by word: runs kept, removed and added, in reading order.

    Words are what whitespace separates, so a Korean eojeol changes as one word.
    """
    old, new = before.split(), after.split()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    runs = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            runs.append({"change": "kept", "text": " ".join(old[i1:i2])})
            continue
        if i2 > i1:
            runs.append({"change": "removed", "text": " ".join(old[i1:i2])})
        if j2 > j1:
            runs.append({"change": "added", "text": " ".join(new[j1:j2])})
    return runs


def edition_diff_read(older, newer, language):
    """The edition diff as a reader of `language` reads it: each edition's claims with the
    figures that edition states, each changed claim or field word by word, every title,
    label and threshold in that language."""
    diff = edition_diff(older, newer)
    before = Reader(language, live_facts(older))
    after = Reader(language, live_facts(newer))
    return {
        **diff,
        "editions": {side: _edition_read(e, language) for side, e in diff["editions"].items()},
        "thresholds": [_threshold_read(change, language) for change in diff["thresholds"]],
        "added": [_claim_read(after, claim) for claim in diff["added"]],
        "changed": [_change_read(before, after, change) for change in diff["changed"]],
        "retracted": [_claim_read(before, claim) for claim in diff["retracted"]],
        "references": _records_read(diff["references"], language),
        "market_editions": [
            {**group, "title": group["title"][language], **_records_read(group, language)}
            for group in diff.get("market_editions", [])
        ],
    }


def _edition_read(entry, language):
    return {
        **entry,
        "label": entry["label"][language],
        "standing_label": entry["standing_label"][language],
    }


def threshold_reads(name, value, language):
    """A threshold as a reader reads it, with its unit: "30 runs", "80%", "not set"."""
    with override(language):
        if value is None:
            return _("not set")
        if THRESHOLD_UNITS[name] == "percent":
            return f"{value}%"
        return ngettext("%(count)s run", "%(count)s runs", value) % {"count": value}


def _threshold_read(change, language):
    name = change["name"]
    return {
        **change,
        "title": change["title"][language],
        "runs": word_changes(
            threshold_reads(name, change["before"], language),
            threshold_reads(name, change["after"], language),
        ),
    }


def _value_reads(change, side, language):
    reads = change.get(f"reads_{side}")
    if reads:
        return reads[language]
    value = change[side]
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _record_changed_read(change, language):
    """A changed record's fields as a reader of `language` reads them: the fields in that
    language or in none, word by word; a change in the other language only is said so."""
    fields = [
        {
            "label": field["label"][language],
            "runs": word_changes(
                _value_reads(field, "before", language), _value_reads(field, "after", language)
            ),
        }
        for field in change["fields"]
        if field["language"] in (None, language)
    ]
    return {**_record_heading_read(change, language), "fields": fields}


def _record_heading_read(record, language):
    kind, title = record["kind"][language], record["title"][language]
    return {"key": record["key"], "kind": None if kind == title else kind, "title": title}


def _records_read(changes, language):
    return {
        "added": [_record_heading_read(r, language) for r in changes["added"]],
        "changed": [_record_changed_read(r, language) for r in changes["changed"]],
        "removed": [_record_heading_read(r, language) for r in changes["removed"]],
    }


def _claim_read(reader, claim):
    return {
        "section_id": claim["section_id"],
        "term": reading_text(reader, claim["term"]),
        "detail": reading_text(reader, claim["detail"]),
    }


def _change_read(before, after, change):
    old, new = change["before"], change["after"]
    term = word_changes(reading_text(before, old["term"]), reading_text(after, new["term"]))
    detail = word_changes(reading_text(before, old["detail"]), reading_text(after, new["detail"]))
    kind = None
    if old["kind"] != new["kind"]:
        kind = {"before": _kind_label(old["kind"]), "after": _kind_label(new["kind"])}
    return {
        "section_id": change["section_id"],
        "term": term,
        "detail": detail,
        "kind": kind,
        # Changed in the other language only, or in a placeholder that reads the same.
        "reads_the_same": kind is None and _all_kept(term) and _all_kept(detail),
    }


def _kind_label(kind):
    return dict(ClaimKind.choices).get(kind, kind)


def _all_kept(runs):
    return all(run["change"] == "kept" for run in runs)
