"""The data documents of the export set, built from the same selectors the pages read.

Each document is a pure function of the records: no clock, no request. That is
what lets the manifest's input hash say "the same records" across two runs.
"""

from django.utils import translation
from django.utils.translation import gettext as _

from governance.aggregates import WITHHELD_SENTENCES, canonical_tasks, snapshot_aggregates
from governance.api.views import CellSerializer, CorrectionSerializer, WithdrawalSerializer
from governance.selectors import cell_list, correction_log, withdrawal_log
from governance.sensitivity import sensitivity_document
from markets.api.serializers import MarketEditionDetailSerializer
from markets.selectors import market_edition_list
from mica.bilingual import LANGUAGES
from mica.methodology.facts import live_facts
from mica.methodology.section_titles import section_name, section_record
from mica.vocabulary import label_for
from mica.workflows import decision_role_label
from submissions.api.challenge_views import challenge_recompute_json
from submissions.models import ChallengeState
from submissions.selectors import challenge_public_list

# One CSV row per cell: the API's cell fields, less the nested ones (sentences, per-task
# scores), with reliability across repeats and the memory record flattened into columns.
NESTED = (
    "blocker_sentences",
    "standing_sentence",
    "task_scores",
    "components",
    "reliability",
    "memory",
    "platform_parity",
)
FLATTENED = {
    "reliability": ["repeats_agreement", "pass_k"],
    "memory": ["memory_exercised", "memory_declared_not_exercised", "memory_not_stated"],
}
GATE_CSV_COLUMNS = [
    column
    for name in CellSerializer.Meta.fields
    for column in FLATTENED.get(name, [name])
    if column not in NESTED
]


def bilingual(text):
    """A lazy interface string in both languages."""
    values = {}
    for language in LANGUAGES:
        with translation.override(language):
            values[language] = str(text)
    return values


def edition_document(edition):
    return {
        "slug": edition.slug,
        "version_label": {"en": edition.version_label_en, "ko": edition.version_label_ko},
        "status": edition.status,
        "published_on": edition.published_on.isoformat() if edition.published_on else None,
    }


def markets_document(edition):
    rows = MarketEditionDetailSerializer(market_edition_list(edition), many=True).data
    return {"edition": edition_document(edition), "markets": rows}


def _aggregate(scope, key, aggregate):
    code = aggregate.withheld_reason
    return {
        "scope": scope,
        "key": key,
        "value": aggregate.value,
        "withheld": code is not None,
        "withheld_reason_code": code,
        "withheld_reason": bilingual(WITHHELD_SENTENCES[code])
        if code in WITHHELD_SENTENCES
        else None,
        "exclusions": aggregate.exclusions,
    }


def gate_aggregates(cells, canonical):
    """Market and family figures per snapshot, each withheld with its reason unless earned.
    (The canonical set reads the whole catalogue: the caller reads it only when there are
    cells.)"""
    by_snapshot = {}
    for cell in cells:
        by_snapshot.setdefault(cell.snapshot, []).append(cell)
    aggregates = []
    for snapshot, mine in by_snapshot.items():
        result = snapshot_aggregates(mine, canonical)
        aggregates.append(
            {
                "system": snapshot.system.slug,
                "snapshot_version": snapshot.version,
                "markets": [_aggregate("market", k, a) for k, a in result["markets"].items()],
                "families": [_aggregate("family", k, a) for k, a in result["families"].items()],
            }
        )
    return aggregates


def gate_document(edition):
    cells = list(cell_list())
    canonical = canonical_tasks() if cells else {}
    return {
        "edition": edition_document(edition),
        "cells": CellSerializer(cells, many=True).data,
        "aggregates": gate_aggregates(cells, canonical),
        "sensitivity": sensitivity_document(cells, canonical),
    }


def _reliability_columns(reliability):
    """Agreement of repeats (empty when no task was repeated, never 0) and pass^k as
    "k=value" pairs, a k without a value written "k=" (a task was run fewer times)."""
    reliability = reliability or {}
    return {
        "repeats_agreement": reliability.get("agreement"),
        "pass_k": ";".join(
            f"{entry['k']}={'' if entry['value'] is None else entry['value']}"
            for entry in reliability.get("pass_k", [])
        ),
    }


MEMORY_STATES = ("exercised", "declared_not_exercised", "not_stated")


def _memory_columns(memory):
    memory = memory or {}
    return {f"memory_{state}": memory.get(state) for state in MEMORY_STATES}


def gate_csv_rows():
    for cell in CellSerializer(cell_list(), many=True).data:
        row = {name: cell[name] for name in GATE_CSV_COLUMNS if name in cell}
        row["blockers"] = ";".join(cell["blockers"])
        row.update(_reliability_columns(cell["reliability"]))
        row.update(_memory_columns(cell["memory"]))
        row["platforms"] = _platforms_column(cell["platforms"])
        yield row


def _platforms_column(platforms):
    """The platforms a cell's runs used, in one cell of the CSV: name, version and
    snapshot date, and "fallback" for a pre-registered fallback."""
    return "; ".join(
        " ".join(
            part
            for part in (
                entry["platform"],
                entry.get("version") or "",
                entry.get("snapshot_date") or "",
                "fallback" if entry.get("fallback") else "",
            )
            if part
        )
        for entry in platforms
    )


def challenge_decisions():
    """Every public decision on a challenge: the role that decided, never the person, and
    for a scoring challenge the portal's recompute with its verdict."""
    decisions = []
    for challenge in challenge_public_list().order_by("pk"):
        for event in challenge.events.all():
            decisions.append(
                {
                    "challenge": challenge.pk,
                    "edition": challenge.edition.slug,
                    "section_id": challenge.section_id,
                    "type": challenge.challenge_type,
                    "action": event.action,
                    "from_state": event.from_state,
                    "to_state": event.to_state,
                    "role": event.role,
                    "reason": event.reason,
                    "at": event.at.isoformat(),
                    "recompute": challenge_recompute_json(challenge),
                }
            )
    return decisions


def corrections_document(edition):
    return {
        "edition": edition_document(edition),
        "corrections": CorrectionSerializer(correction_log(), many=True).data,
        "withdrawals": WithdrawalSerializer(withdrawal_log(), many=True).data,
        "challenge_decisions": challenge_decisions(),
    }


def project_state_document(edition, files):
    """The live figures of the edition, and where each export of the set is."""
    return {
        "edition": edition_document(edition),
        "facts": live_facts(edition),
        "publication_eligible": live_facts(edition)["en"]["publication_eligible"] == "true",
        "files": files,
    }


EPOCH = "2026-01-01T00:00:00+00:00"


def latest_decision_time(document):
    """When the feed last changed: its newest entry (a fixed date while it has none)."""
    times = [entry["updated"] for entry in atom_entries(document, "")]
    return max(times, default=EPOCH)


def _in_both(line, record):
    """An entry's title in English and Korean together: a feed reader shows one title."""
    parts = []
    for language in LANGUAGES:
        with translation.override(language):
            parts.append(line(record))
    return " / ".join(parts)


def _correction_title(correction):
    return _("Correction of %(section)s") % {"section": _section(correction)}


def _section(entry):
    """The section an entry is about, by its title in the language being written (its id
    when the document names no edition or the edition no such record)."""
    return section_name(entry.get("record"), entry["section_id"])


def _with_records(entries):
    """Each entry with the record its section id names in its edition (one look-up each)."""
    records = {}
    for entry in entries:
        key = (entry.get("edition"), entry["section_id"])
        if key not in records:
            records[key] = section_record(*key) if key[0] else None
        yield {**entry, "record": records[key]}


def _decision_title(decision):
    """What was decided on a challenge and by which role, in words, not codes."""
    return _("Challenge #%(number)s on %(section)s: %(decision)s (%(role)s)") % {
        "number": decision["challenge"],
        "section": _section(decision),
        "decision": label_for(ChallengeState, decision["to_state"]),
        "role": decision_role_label(decision["role"]),
    }


def atom_entries(document, site_url):
    """Corrections and challenge decisions as Atom entries, English and Korean together."""
    entries = []
    for correction in _with_records(document["corrections"]):
        section, decided = correction["section_id"], correction["decided_on"]
        permalink = f"{site_url}/methodology/claims/{section}/"
        entries.append(
            {
                # The correction's own id: two corrections of a claim on one day are two
                # entries, and a regeneration gives each the id it had.
                "id": f"{permalink}#correction-{correction['id']}",
                "title": _in_both(_correction_title, correction),
                "updated": f"{decided}T00:00:00+00:00",
                "link": permalink,
                "summary": f"{correction['text_en']}\n\n{correction['text_ko']}",
            }
        )
    for decision in _with_records(document["challenge_decisions"]):
        challenge = decision["challenge"]
        entries.append(
            {
                "id": f"{site_url}/challenges/{challenge}/#{decision['action']}-{decision['at']}",
                "title": _in_both(_decision_title, decision),
                "updated": decision["at"],
                "link": f"{site_url}/challenges/{challenge}/",
                "summary": decision["reason"],
            }
        )
    return entries
