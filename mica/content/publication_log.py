"""The publication log: every publication appends one entry, chained and signed.

An export set, a bake and an edition each append one entry when they are published, in
the transaction that publishes them (the pointer's move, the edition's new status), so
the entry commits with the publication or not at all. mica.publication_chain holds the
rules an entry follows and the verifier; this module appends, reads and guards entries.

Appending takes a lock, so two publications never both take the same place in the chain:
on PostgreSQL a lock on the log's table (EXCLUSIVE: readers go on, a second appender
waits; a row lock would not do, as an empty log has no row to lock), on SQLite the write
lock every write transaction holds. The unique sequence and digest refuse a fork anyway.

The entries refuse change in the database itself: triggers refuse UPDATE and DELETE on
both databases, and TRUNCATE on PostgreSQL, to any SQL, with no session setting that lifts
them. `publication_log_maintenance` drops and remakes them around the flush that empties a
whole database (the test suite's reset), in one transaction. A restore replaces the
database whole (SQLite's backup API, pg_restore --clean), which fires no row trigger: the
log is then the backup's, and the next publication goes on from its last entry.
"""

import base64
import hashlib
import logging
from contextlib import contextmanager
from datetime import UTC

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from mica import signing
from mica.content.models import PublicationKind, PublicationLogEntry
from mica.errors import DomainError
from mica.publication_chain import (
    GENESIS,
    KEY_ROTATION,
    canonical,
    entry_content,
    entry_digest,
    public_key_id,
    public_key_load,
    public_key_pem,
    public_key_raw,
)

logger = logging.getLogger(__name__)

TABLE = PublicationLogEntry._meta.db_table
FORMAT = "mica-publication-log"
FORMAT_VERSION = 1


class PublicationLogRefused(DomainError):
    """The log cannot take an entry signed by this node's key."""


def sha256_of(document):
    """The SHA-256 (hex) of a JSON document in the chain's canonical form."""
    return hashlib.sha256(canonical(document)).hexdigest()


def _at_text(at):
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def entry_document(entry):
    """An entry as /transparency/log.json gives it and verify_chain reads it."""
    return {
        "sequence": entry.sequence,
        "at": _at_text(entry.at),
        "kind": entry.kind,
        "subject": entry.subject,
        "previous_digest": entry.previous_digest,
        "key_id": entry.key_id,
        "digest": entry.digest,
        "signature": entry.signature,
    }


def _key_in_force(last):
    """The id of the key that signs the entry after `last`."""
    return last.subject.get("new_key_id") if last.kind == KEY_ROTATION else last.key_id


def _lock(using):
    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {TABLE} IN EXCLUSIVE MODE")


def _signer_check(key_id, last, using):
    """Refuse a key the log retired: a node still on the key a rotation replaced would fork
    the key history. A key the log never saw (a lost key replaced, a restore on a new
    machine) may sign: the page and a verifier given that key show where it took over."""
    in_force = _key_in_force(last)
    if key_id == in_force:
        return
    if PublicationLogEntry.objects.using(using).filter(key_id=key_id).exists():
        raise PublicationLogRefused(
            _(
                "This machine signs with key %(key)s, which the publication log has retired; "
                "the key in force is %(in_force)s. Set MICA_SIGNING_KEY to it."
            )
            % {"key": key_id, "in_force": in_force}
        )
    logger.warning(
        "publication log: key %s signs after key %s, without a rotation", key_id, in_force
    )


def publication_log_append(*, kind, subject, key=None, using=DEFAULT_DB_ALIAS):
    """Append the entry of one publication, signed with `key` (the site's key by default),
    inside the caller's transaction when there is one; return it."""
    key = key or signing.signing_key()
    key_id = signing.key_id(key)
    with transaction.atomic(using=using):
        _lock(using)
        last = PublicationLogEntry.objects.using(using).order_by("-sequence").first()
        if last is not None:
            _signer_check(key_id, last, using)
        at = timezone.now()
        document = {
            "sequence": last.sequence + 1 if last else 1,
            "at": _at_text(at),
            "kind": str(kind),
            "subject": subject,
            "previous_digest": last.digest if last else GENESIS,
            "key_id": key_id,
        }
        signed = canonical(entry_content(document))
        return PublicationLogEntry.objects.using(using).create(
            **{**document, "at": at},
            digest=entry_digest(document),
            public_key=_raw_text(key.public_key()),
            signature=signing.sign(signed, key),
        )


def _raw_text(public_key):
    return base64.b64encode(public_key_raw(public_key)).decode("ascii")


def publication_log_rotate(*, new_key):
    """Append a key rotation naming `new_key`, signed by the key in use now; return the
    entry. The caller switches to the new key (rotate_signing_key)."""
    public = new_key.public_key()
    subject = {"new_key_id": public_key_id(public), "new_public_key": public_key_pem(public)}
    return publication_log_append(kind=PublicationKind.KEY_ROTATION, subject=subject)


def publication_log_ready(using=DEFAULT_DB_ALIAS):
    """Whether the database has the log: a restored backup of an older release may not,
    until `migrate` runs."""
    return TABLE in connections[using].introspection.table_names()


# --- Reading ----------------------------------------------------------------------------


def publication_log_entries():
    """Every entry, oldest first."""
    return PublicationLogEntry.objects.order_by("sequence")


def publication_log_newest_first():
    return PublicationLogEntry.objects.order_by("-sequence")


def publication_log_last():
    return publication_log_newest_first().first()


def publication_log_key(last=None):
    """(id, PEM) of the key in force: the one the log's last entry hands on, read from the
    database so that every node serves the same; before the first entry, this machine's
    key; None when there is none."""
    last = last or publication_log_last()
    if last is None:
        try:
            return signing.key_id(), signing.public_pem()
        except signing.SigningKeyUnavailable:
            return None
    if last.kind == KEY_ROTATION:
        return last.subject["new_key_id"], last.subject["new_public_key"]
    return last.key_id, public_key_pem(public_key_load(last.public_key))


def publication_log_keys():
    """{id: PEM} of every key that signed an entry or that a rotation named."""
    keys = {}
    for key_id, raw in PublicationLogEntry.objects.values_list("key_id", "public_key").distinct():
        keys[key_id] = public_key_pem(public_key_load(raw))
    rotations = PublicationLogEntry.objects.filter(kind=KEY_ROTATION).values_list(
        "subject", flat=True
    )
    for subject in rotations:
        keys[subject["new_key_id"]] = subject["new_public_key"]
    return dict(sorted(keys.items()))


def publication_log_document_head():
    """What /transparency/log.json says before its entries."""
    in_force = publication_log_key()
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "key_id": in_force[0] if in_force else None,
        "public_key": in_force[1] if in_force else None,
        "keys": publication_log_keys(),
    }


# --- The triggers -----------------------------------------------------------------------

MESSAGE = "MICA: the publication log is append-only: an entry is never changed or deleted"
PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION mica_publication_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{MESSAGE} (%)', TG_OP USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql
"""
PG_TRIGGERS = {
    "mica_publication_log_rows": "BEFORE UPDATE OR DELETE ON {table} FOR EACH ROW",
    # TRUNCATE fires no row trigger: a statement trigger refuses it.
    "mica_publication_log_truncate": "BEFORE TRUNCATE ON {table} FOR EACH STATEMENT",
}
SQLITE_OPERATIONS = ("UPDATE", "DELETE")


def _statements_install(vendor):
    if vendor == "postgresql":
        statements = [PG_FUNCTION]
        for name, when in PG_TRIGGERS.items():
            statements += [
                f"DROP TRIGGER IF EXISTS {name} ON {TABLE}",
                f"CREATE TRIGGER {name} {when.format(table=TABLE)} "
                "EXECUTE FUNCTION mica_publication_log_append_only()",
            ]
        return statements
    if vendor == "sqlite":
        return [
            f"CREATE TRIGGER IF NOT EXISTS mica_publication_log_{operation.lower()} "
            f"BEFORE {operation} ON {TABLE} "
            f"BEGIN SELECT RAISE(ABORT, '{MESSAGE} ({operation})'); END"
            for operation in SQLITE_OPERATIONS
        ]
    return []


def _statements_remove(vendor):
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {name} ON {TABLE}" for name in PG_TRIGGERS]
    if vendor == "sqlite":
        return [
            f"DROP TRIGGER IF EXISTS mica_publication_log_{operation.lower()}"
            for operation in SQLITE_OPERATIONS
        ]
    return []


def _execute(connection, statements):
    if TABLE not in connection.introspection.table_names():
        return
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def publication_log_triggers_install(connection):
    """Create the triggers (again): idempotent, run by the migration and after every
    migrate, since SQLite drops a table's triggers when a migration rebuilds it."""
    _execute(connection, _statements_install(connection.vendor))


def publication_log_triggers_remove(connection):
    _execute(connection, _statements_remove(connection.vendor))


@contextmanager
def publication_log_maintenance(connection):
    """The log may be emptied inside: for the flush that empties a whole database, on both
    databases (PostgreSQL's flush truncates, which a trigger refuses here). One
    transaction, so no other write meets the gap."""
    with transaction.atomic(using=connection.alias):
        publication_log_triggers_remove(connection)
        yield
        publication_log_triggers_install(connection)


def publication_log_after_migrate(sender, using, **kwargs):
    """A post_migrate receiver: the triggers stand after every migrate and flush."""
    publication_log_triggers_install(connections[using])
