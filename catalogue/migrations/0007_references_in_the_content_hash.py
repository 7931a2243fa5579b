"""A version's speed and cost references are part of what a local reviewer approves.

Seed: "Speed and cost references are pre-registered per task version". The content
hash (catalogue.rules.task_version_content) now covers them, so every version's hash is
taken again. An approval that was in force (it pinned the version's hash as it stood)
stays in force, pinned to the new hash of the same content: the rule that was in force
when it was given did not cover the references, and the record cannot say whether they
moved since. The approval's event keeps the hash it was given under.
"""

import hashlib
import json
from decimal import Decimal

from django.db import migrations

LANGUAGES = ("en", "ko")


def _pair(record, field):
    return {lang: str(getattr(record, f"{field}_{lang}") or "") for lang in LANGUAGES}


def _fixed(value, places):
    return None if value in (None, "") else f"{Decimal(str(value)):.{places}f}"


def _content(version):
    # As catalogue.rules.task_version_content was when this migration was written.
    return {
        "task": version.definition.slug,
        "version": version.version,
        **{
            field: _pair(version, field)
            for field in ("title", "final_state", "confirmation_boundary", "idempotency")
        },
        "evidence_requirements": version.evidence_requirements,
        "surface": version.surface,
        "termination_class": version.termination_class,
        "declared_complexity": version.declared_complexity,
        "diagnostic_axes": version.diagnostic_axes,
        "locality_conditions": version.locality_conditions,
        "parameter_schema": version.parameter_schema,
        "references": {
            "status": version.reference_status,
            "method": version.reference_method,
            "sample_size": version.reference_sample_size,
            "speed_seconds": _fixed(version.speed_reference_seconds, 2),
            "cost_usd": _fixed(version.cost_reference_usd, 4),
        },
        "clauses": [
            {"kind": c.kind, "text": _pair(c, "text")}
            for c in version.clauses.order_by("kind", "position", "pk")
        ],
        "applicability": [
            {
                "market": a.market.code,
                "status": a.status,
                **{
                    field: _pair(a, field)
                    for field in ("note", "variant", "region", "channel", "register")
                },
            }
            for a in version.applicability.select_related("market").order_by(
                "market__display_order"
            )
        ],
    }


def _hash(version):
    canonical = json.dumps(_content(version), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def rehash(apps, schema_editor):
    TaskVersion = apps.get_model("catalogue", "TaskVersion")
    LocalReview = apps.get_model("catalogue", "LocalReview")
    for version in TaskVersion.objects.select_related("definition").iterator():
        new_hash = _hash(version)
        if new_hash == version.content_hash:
            continue
        LocalReview.objects.filter(
            version=version, state="approved", approved_hash=version.content_hash
        ).exclude(approved_hash="").update(approved_hash=new_hash)
        TaskVersion.objects.filter(pk=version.pk).update(content_hash=new_hash)


class Migration(migrations.Migration):
    dependencies = [
        ("catalogue", "0006_task_events"),
    ]

    operations = [
        migrations.RunPython(rehash, migrations.RunPython.noop),
    ]
