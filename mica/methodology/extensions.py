"""What the floors above tell an edition about themselves.

The methodology is floor 1: markets, the catalogue, submissions and governance
build on it and it imports none of them. Where an edition needs their records
(the live figures of its prose, the checks before it is published, the catalogue
it freezes), the app that owns them registers a function here in its
`AppConfig.ready`; the methodology calls whatever is registered.
"""

from django.dispatch import Signal

# Sent inside the transaction that creates a draft, as `source=…, draft=…`: the
# apps with records per edition (the market editions) copy theirs.
edition_drafted = Signal()

_live_figures = []
_publication_checks = []
_frozen_counts = []
_catalogue = []
_catalogue_freezes = []
_edition_commitments = []
_corrections = []
_open_challenges = []
_edition_records = {}


def _one(registered, what):
    if len(registered) != 1:
        raise LookupError(f"exactly one app must register {what}; {len(registered)} did")
    return registered[0]


def live_figures_register(figures):
    """`figures(edition)` -> {placeholder: value} for the prose of the edition."""
    _live_figures.append(figures)


def live_figures_registered():
    return list(_live_figures)


def publication_check_register(check):
    """`check(edition)` -> the sentences that refuse its publication (empty: none)."""
    _publication_checks.append(check)


def publication_checks_registered():
    return list(_publication_checks)


def frozen_count_register(count):
    """`count(edition)` -> (label, number) of what publishing the edition freezes."""
    _frozen_counts.append(count)


def frozen_counts_registered():
    return list(_frozen_counts)


def catalogue_register(snapshot):
    """`snapshot()` -> the live public task catalogue, as an edition freezes it."""
    _catalogue.append(snapshot)


def catalogue_snapshot():
    return _one(_catalogue, "the task catalogue")()


def edition_commitments_register(commit):
    """`commit(edition)` -> the sorted commitments a published edition's log entry
    carries for what it keeps secret (the holdout tasks)."""
    _edition_commitments.append(commit)


def edition_commitments(edition):
    return sorted(c for commit in _edition_commitments for c in commit(edition))


def catalogue_freeze_register(freeze):
    """`freeze(snapshot)` -> fix for good the records a published edition's catalogue
    snapshot holds (its task versions)."""
    _catalogue_freezes.append(freeze)


def catalogue_freeze(snapshot):
    for freeze in _catalogue_freezes:
        freeze(snapshot)


def corrections_register(by_section):
    """`by_section(edition)` -> {section id: [accepted corrections, oldest first]}."""
    _corrections.append(by_section)


def corrections_by_section(edition):
    return _one(_corrections, "the corrections")(edition)


def open_challenges_register(challenges):
    """`challenges(edition)` -> the open public challenges of the edition."""
    _open_challenges.append(challenges)


def open_challenges(edition):
    return _one(_open_challenges, "the open challenges")(edition)


def edition_records_register(part, records):
    """`records(edition)` -> what the edition holds of `part` (e.g. "market_editions"), as
    the edition diff compares it: a list of groups, each {"key", "title": {en, ko},
    "records": [mica.methodology.diff.diff_record(...), ...]}."""
    _edition_records[part] = records


def edition_records_registered():
    """{part: records} of every app that registered what its editions hold."""
    return dict(_edition_records)
