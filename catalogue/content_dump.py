"""Writes the task families and their public tasks back to content/, as the loader reads them.

families.yaml lists the families in their order; tasks/<family>.yaml lists the
family's tasks in their order, each with its current version (or, failing one,
its newest). Holdout tasks are never written: the content folder is public.
"""

from pathlib import Path

from django.db.models import Prefetch

from catalogue.models import ClauseKind, MarketApplicability, TaskFamily, TaskSet, TaskVersion
from mica.bilingual import field_pair
from mica.content.loading import Flow, optional_text_pair, write_yaml

CONTENT_DIR = Path(__file__).resolve().parent / "content"
CLAUSE_KEYS = {
    "obligations": ClauseKind.OBLIGATION,
    "invariants": ClauseKind.INVARIANT,
    "prohibited_states": ClauseKind.PROHIBITED,
}
# The basis families.yaml states for each timeout (the loader reads only the seconds).
TIMEOUT_BASIS = {
    900: "single-system-of-record",
    1200: "several-surfaces",
    1800: "multi-provider-or-document-heavy",
}
# A parameter's keys in the order the task files list them (PostgreSQL's jsonb keeps none).
PARAMETER_KEYS = ["name", "type", "min", "max", "choices", "description", "en", "ko"]


def _write(directory, filename, data):
    write_yaml(directory / filename, data, header_from=CONTENT_DIR / filename)


def _family(family):
    measurement = {"timeout_sec": family.timeout_seconds}
    if family.timeout_seconds in TIMEOUT_BASIS:
        measurement["timeout_basis"] = TIMEOUT_BASIS[family.timeout_seconds]
    measurement["final_state_evidence"] = field_pair(family, "final_state_evidence")
    measurement["boundary_evidence"] = field_pair(family, "boundary_evidence")
    return {
        "slug": family.slug,
        "position": family.position,
        "task_prefix": family.task_prefix,
        "label": field_pair(family, "label"),
        "summary": field_pair(family, "summary"),
        "why_it_is_hard": field_pair(family, "why_hard"),
        "measurement": measurement,
    }


def _parameter_value(value):
    if isinstance(value, dict):
        rank = {key: index for index, key in enumerate(PARAMETER_KEYS)}
        keys = sorted(value, key=lambda key: rank.get(key, len(PARAMETER_KEYS)))
        return {key: _parameter_value(value[key]) for key in keys}
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            return Flow(value)
        return [_parameter_value(item) for item in value]
    return value


def _applicability(entry):
    data = {"status": entry.status, "note": field_pair(entry, "note")}
    for name in ("variant", "region", "channel", "register"):
        value = optional_text_pair(entry, name)
        if value:
            data[name] = value
    return data


def _task(definition, version):
    clauses = {key: [] for key in CLAUSE_KEYS}
    kinds = {kind: key for key, kind in CLAUSE_KEYS.items()}
    for clause in version.clauses.all():
        clauses[kinds[clause.kind]].append(field_pair(clause, "text"))
    data = {
        "id": definition.slug,
        "lifecycle": definition.lifecycle,
        "task_set": definition.task_set,
        "version": version.version,
        "title": field_pair(version, "title"),
        "final_state": field_pair(version, "final_state"),
        **clauses,
        "confirmation_boundary": field_pair(version, "confirmation_boundary"),
        "evidence_requirements": Flow(version.evidence_requirements),
        # Optional: the task files spell a missing one out as null.
        "idempotency": optional_text_pair(version, "idempotency"),
        "surface": version.surface,
        "termination_class": version.termination_class,
        "declared_complexity": version.declared_complexity,
        "diagnostic_axes": Flow(version.diagnostic_axes),
        "locality_conditions": Flow(version.locality_conditions),
        "parameters": _parameter_value(version.parameter_schema),
        "applicability": {
            entry.market.code: _applicability(entry) for entry in version.applicability.all()
        },
    }
    return data


def _versions_of(definitions):
    """Each definition's current version (else its newest), clauses and markets read at once."""
    wanted = {
        definition.pk: definition.current_version_id
        for definition in definitions
        if definition.current_version_id
    }
    for definition in definitions:
        if definition.pk not in wanted:
            newest = definition.versions.order_by("-created_at", "-pk").first()
            if newest is not None:
                wanted[definition.pk] = newest.pk
    versions = TaskVersion.objects.filter(pk__in=wanted.values()).prefetch_related(
        "clauses",
        Prefetch(
            "applicability",
            queryset=MarketApplicability.objects.select_related("market").order_by(
                "market__display_order"
            ),
        ),
    )
    by_pk = {version.pk: version for version in versions}
    return {pk: by_pk[version_pk] for pk, version_pk in wanted.items()}


def dump(directory, report):
    families = list(TaskFamily.objects.order_by("position"))
    _write(directory, "families.yaml", [_family(family) for family in families])
    written = held_out = 0
    for family in families:
        definitions = list(family.tasks.order_by("position", "slug"))
        versions = _versions_of(definitions)
        tasks = []
        for definition in definitions:
            if definition.task_set == TaskSet.HOLDOUT:
                held_out += 1
            elif definition.pk not in versions:
                report(f"{definition.slug} has no version; not written")
            else:
                tasks.append(_task(definition, versions[definition.pk]))
        _write(directory, f"tasks/{family.slug}.yaml", tasks)
        written += len(tasks)
    report(
        f"families: {len(families)}, tasks: {written}"
        + (f" (holdout tasks left out: {held_out})" if held_out else "")
    )
