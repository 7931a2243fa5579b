"""Holdout commitments: the portal commits to every holdout task's text at each
publication of an edition without showing it, and reveals it when the task leaves the
holdout (retired, or made public).

commitment = SHA-256 of the ASCII text "<salt>:<content hash>", where the salt is 32
random bytes in hex kept per task under the holdout capability, and the content hash is
the task version's (catalogue.rules.task_version_hash). An edition's log entry lists the
commitments sorted, with no task named, so their number is all they tell: the holdout
count the site already states. The reveal entry names the task, its version, content
hash and salt; `mica_verify` recomputes the commitment and finds it in an earlier entry.
"""

import hashlib
import secrets

from django.utils import timezone

from catalogue.models import (
    HoldoutCommitment,
    HoldoutSalt,
    Lifecycle,
    TaskDefinition,
    TaskSet,
)
from mica.content.models import PublicationKind
from mica.content.publication_log import publication_log_append


def commitment_of(salt, content_hash):
    return hashlib.sha256(f"{salt}:{content_hash}".encode("ascii")).hexdigest()


def _salt_of(definition):
    salt, _created = HoldoutSalt.objects.get_or_create(
        definition=definition, defaults={"salt": secrets.token_hex(32)}
    )
    return salt.salt


def holdout_in_force():
    """The holdout tasks an edition commits to: current, not retired."""
    return (
        TaskDefinition.objects.filter(task_set=TaskSet.HOLDOUT, current_version__isnull=False)
        .exclude(lifecycle=Lifecycle.RETIRED)
        .select_related("current_version")
        .order_by("pk")
    )


def holdout_commit(edition):
    """Record each holdout task's commitment for `edition`; return them sorted (the order
    of the tasks would say something of them)."""
    rows = []
    for definition in holdout_in_force():
        version = definition.current_version
        rows.append(
            HoldoutCommitment(
                edition=edition,
                definition=definition,
                version=version,
                content_hash=version.content_hash,
                commitment=commitment_of(_salt_of(definition), version.content_hash),
            )
        )
    HoldoutCommitment.objects.bulk_create(rows)
    return sorted(row.commitment for row in rows)


def holdout_reveal(definition):
    """When a holdout task leaves the holdout, a log entry reveals its salt, with the
    version and content hash of each commitment it opens. Nothing to reveal for a task
    never committed to."""
    salt = HoldoutSalt.objects.filter(definition=definition, revealed_at=None).first()
    if salt is None:
        return None
    committed = (
        HoldoutCommitment.objects.filter(definition=definition)
        .values_list("version__version", "content_hash", "commitment")
        .distinct()
        .order_by("version__version")
    )
    subject = {
        "task": definition.slug,
        "salt": salt.salt,
        "opens": [
            {"version": number, "content_hash": content_hash, "commitment": commitment}
            for number, content_hash, commitment in committed
        ],
    }
    entry = publication_log_append(kind=PublicationKind.HOLDOUT_REVEAL, subject=subject)
    HoldoutSalt.objects.filter(pk=salt.pk).update(revealed_at=timezone.now())
    return entry


def holdout_left_note(sender, instance, **kwargs):
    """pre_save of a task: note whether this save takes it out of the holdout (made public,
    or retired), for holdout_left_reveal to reveal its salt in the same transaction."""
    if instance.pk is None:
        return
    stored = TaskDefinition.objects.filter(pk=instance.pk).values("task_set", "lifecycle").first()
    instance._leaves_holdout = bool(
        stored
        and stored["task_set"] == TaskSet.HOLDOUT
        and stored["lifecycle"] != Lifecycle.RETIRED
        and (instance.task_set == TaskSet.PUBLIC or instance.lifecycle == Lifecycle.RETIRED)
    )


def holdout_left_reveal(sender, instance, **kwargs):
    if getattr(instance, "_leaves_holdout", False):
        instance._leaves_holdout = False
        holdout_reveal(instance)
