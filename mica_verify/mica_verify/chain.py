"""The publication log's chain, checked by its published rules (kept in this one module
so it is easy to align with the portal's description of them):

- entries are numbered 1, 2, 3, ... with no gap, oldest first;
- an entry's digest is the SHA-256 (hex) of the canonical JSON (sorted keys, no spaces,
  UTF-8) of its fields sequence, at, kind, subject, previous_digest and key_id;
- previous_digest is the digest of the entry before it, 64 zeros for the first;
- signature is the Ed25519 signature (base64) of those same canonical bytes by key_id,
  the first 16 hex digits of the SHA-256 of the raw 32-byte public key;
- a "key-rotation" entry, signed by the key in force, names the next key (new_key_id,
  new_public_key in PEM); from the entry after it only that key signs, and a key that
  was replaced never signs again. A key replaced without a rotation (one that was lost)
  is accepted only when it is the key the site serves now.

The log's chain ends with the key the site serves: the key in force after the last
entry must be it.
"""

import base64
import binascii
import hashlib
import json

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from mica_verify.source import KEY, LOG, MANIFEST, Missing

AREA = "publication log"
GENESIS = "0" * 64
KEY_ROTATION = "key-rotation"
SIGNED_FIELDS = ("sequence", "at", "kind", "subject", "previous_digest", "key_id")


class Broken(Exception):
    def __init__(self, sequence, why):
        super().__init__(why)
        self.sequence = sequence
        self.why = why


def canonical(document):
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed_bytes(entry):
    return canonical({name: entry[name] for name in SIGNED_FIELDS})


def key_from_pem(data):
    text = data.decode("ascii") if isinstance(data, bytes) else data
    try:
        key = serialization.load_pem_public_key(text.strip().encode("ascii"))
    except (ValueError, UnsupportedAlgorithm) as error:
        raise ValueError(f"not a PEM public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def key_id(key):
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def signature_valid(key, signature, data):
    try:
        key.verify(base64.b64decode(signature, validate=True), data)
    except (InvalidSignature, binascii.Error, ValueError, TypeError):
        return False
    return True


class Keys:
    """Which key signs each entry: the key in force, the keys retired, and the keys the
    log lists (only the first entry's is taken from that list unvouched)."""

    def __init__(self, served, listed):
        self.served = served
        self.listed = listed
        self.vouched = {key_id(served): served}
        self.in_force = None
        self.retired = set()

    def signer(self, sequence, named):
        if named in self.retired:
            raise Broken(sequence, f"signed by key {named}, which an earlier entry retired")
        if self.in_force is None:
            key = self.vouched.get(named) or self._listed(sequence, named)
        elif named == self.in_force:
            key = self.vouched[named]
        elif named == key_id(self.served):
            self.retired.add(self.in_force)  # a lost key replaced by the one served now
            key = self.served
        else:
            raise Broken(
                sequence,
                f"signed by key {named}, but key {self.in_force} is in force and no "
                "rotation hands over to it",
            )
        self.vouched[named] = key
        self.in_force = named
        return key

    def _listed(self, sequence, named):
        try:
            key = key_from_pem(self.listed[named])
        except (KeyError, ValueError, TypeError) as error:
            raise Broken(sequence, f"signed by key {named}, which the log does not give") from error
        if key_id(key) != named:
            raise Broken(sequence, f"the log gives another key under the id {named}")
        return key

    def rotate(self, sequence, subject):
        try:
            new = key_from_pem(subject["new_public_key"])
        except (KeyError, TypeError, ValueError) as error:
            raise Broken(sequence, "a key rotation that names no readable key") from error
        new_id = key_id(new)
        if subject.get("new_key_id") != new_id or new_id == self.in_force or new_id in self.retired:
            raise Broken(sequence, f"a key rotation to key {new_id}, which it may not name")
        self.retired.add(self.in_force)
        self.vouched[new_id] = new
        self.in_force = new_id


def entry_check(entry, expected, previous, keys):
    """One entry in its place; its digest, or Broken naming why."""
    if not isinstance(entry, dict) or any(n not in entry for n in (*SIGNED_FIELDS, "digest")):
        raise Broken(expected, "not a well-formed entry")
    if not isinstance(entry["subject"], dict):
        raise Broken(expected, "its subject is not an object")
    if entry["sequence"] != expected:
        raise Broken(
            expected, f"entry {expected} is missing: the log goes on with {entry['sequence']}"
        )
    if entry["previous_digest"] != previous:
        raise Broken(expected, "does not name the digest of the entry before it")
    if entry["digest"] != hashlib.sha256(signed_bytes(entry)).hexdigest():
        raise Broken(expected, "its content does not match its digest")
    key = keys.signer(expected, entry["key_id"])
    if not signature_valid(key, entry.get("signature", ""), signed_bytes(entry)):
        raise Broken(expected, f"its signature does not verify with key {entry['key_id']}")
    if entry["kind"] == KEY_ROTATION:
        keys.rotate(expected, entry["subject"])
    return entry["digest"]


def log_check(source, report):
    """The whole chain, then that it ends with the served key and records this manifest.
    Returns {key id: key} of every key the chain vouches for (for the manifest's
    signature)."""
    try:
        log = source.json(LOG)
        served = key_from_pem(source.read(KEY))
        manifest_digest = hashlib.sha256(source.read(MANIFEST)).hexdigest()
    except (Missing, ValueError) as error:
        report.fail(AREA, LOG, str(error))
        return {}
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list) or not entries:
        report.fail(AREA, LOG, "the log has no entries")
        return {}
    keys = Keys(served, log.get("keys") or {})
    previous = GENESIS
    for expected, entry in enumerate(entries, start=1):
        try:
            previous = entry_check(entry, expected, previous, keys)
        except Broken as broken:
            report.fail(AREA, f"entry {broken.sequence}", broken.why)
            return {}
        report.check(AREA, f"entry {expected}", True)
    report.check(
        AREA,
        "key in force",
        keys.in_force == key_id(served),
        f"the log ends with key {keys.in_force}, the site serves key {key_id(served)}",
    )
    recorded = any(
        e["kind"] == "exports" and e["subject"].get("manifest_sha256") == manifest_digest
        for e in entries
    )
    report.check(
        AREA,
        "manifest recorded",
        recorded,
        f"no exports entry records manifest.json's SHA-256 {manifest_digest}",
    )
    reveals_check(entries, report)
    return dict(keys.vouched)


def commitment_of(salt, content_hash):
    """SHA-256 of the ASCII text "<salt>:<content hash>", as an edition commits to a
    holdout task before anyone may see it."""
    return hashlib.sha256(f"{salt}:{content_hash}".encode("ascii")).hexdigest()


def reveals_check(entries, report):
    """Every revealed salt opens a commitment an earlier edition entry made."""
    committed = set()
    for entry in entries:
        subject = entry["subject"]
        if entry["kind"] == "edition":
            committed.update(subject.get("holdout_commitments") or [])
        elif entry["kind"] == "holdout-reveal":
            for opened in subject.get("opens") or []:
                name = f"entry {entry['sequence']}: {subject.get('task')} {opened.get('version')}"
                made = commitment_of(subject.get("salt", ""), opened.get("content_hash", ""))
                report.check(
                    AREA,
                    name,
                    made == opened.get("commitment") and made in committed,
                    "the revealed salt and content hash do not open a commitment made before",
                )
