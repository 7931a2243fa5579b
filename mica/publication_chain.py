"""The rules of the publication log's chain, and the one function that checks a chain.

Pure: the standard library and `cryptography` only, no Django, so that a verifier
outside the portal reads the same rules from this one file.

An entry is a mapping (as /transparency/log.json gives it):

    sequence         1, 2, 3, ... with no gap
    at               when it was appended, ISO 8601 in UTC
    kind             what was published: "exports", "bake", "edition", "key-rotation", ...
    subject          what exactly (JSON: strings, whole numbers, lists and objects, no floats)
    previous_digest  the digest of the entry before it (GENESIS for the first)
    key_id           the signing key's id (public_key_id)
    digest           SHA-256 (hex) of canonical(content(entry))
    signature        Ed25519 signature (base64) of canonical(content(entry))

The digest covers the previous entry's digest, so one signature vouches for the whole
history before it: an entry removed, added or changed breaks every link after it.

A key changes by a "key-rotation" entry, signed by the key in force, whose subject names
the new key (`new_key_id`, `new_public_key` in PEM); from the entry after it only the
new key signs, and the old key never signs again. A key lost without a rotation can only
be followed by a key the verifier is given itself, as nothing in the chain vouches for it.
"""

import base64
import binascii
import hashlib
import json

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

GENESIS = "0" * 64
KEY_ROTATION = "key-rotation"
CONTENT_FIELDS = ("sequence", "at", "kind", "subject", "previous_digest", "key_id")


class ChainBroken(ValueError):
    """The chain does not check; the message names the entry and why."""

    def __init__(self, sequence, reason):
        super().__init__(f"entry {sequence}: {reason}")
        self.sequence = sequence
        self.reason = reason


def canonical(document):
    """The bytes that are hashed and signed: JSON with sorted keys, no spaces, UTF-8."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def entry_content(entry):
    """What an entry's digest and signature cover: every field but the two themselves."""
    return {name: entry[name] for name in CONTENT_FIELDS}


def entry_digest(entry):
    return hashlib.sha256(canonical(entry_content(entry))).hexdigest()


def public_key_load(value):
    """An Ed25519 public key from a key object, PEM text or bytes, or the raw 32 bytes in
    base64. ValueError for anything else."""
    if isinstance(value, Ed25519PublicKey):
        return value
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else str(value)
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode("ascii"))
        else:
            key = Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, TypeError, binascii.Error, UnicodeEncodeError) as error:
        raise ValueError(f"not an Ed25519 public key: {error}") from error
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def public_key_raw(key):
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key_pem(key):
    pem = key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode("ascii")


def public_key_id(key):
    """The first 16 hex digits of the SHA-256 of the raw public key."""
    return hashlib.sha256(public_key_raw(public_key_load(key))).hexdigest()[:16]


def signature_valid(key, signature, data):
    try:
        key.verify(base64.b64decode(signature, validate=True), data)
    except (InvalidSignature, ValueError, TypeError, binascii.Error):
        return False
    return True


class _Keys:
    """Which key signs at each point of the chain, and which keys may no longer sign."""

    def __init__(self, public_keys):
        loaded = [public_key_load(key) for key in public_keys]
        self.trusted = {public_key_id(key): key for key in loaded}
        self.known = dict(self.trusted)
        self.in_force = None
        self.retired = {}

    def signer(self, sequence, key_id):
        """The key that must have signed entry `sequence`, which names `key_id`."""
        if key_id in self.retired:
            raise ChainBroken(
                sequence, f"signed by key {key_id}, retired by {self.retired[key_id]}"
            )
        if self.in_force is not None and key_id != self.in_force:
            # A key replaced without a rotation (the old one lost) is accepted only from a
            # key the verifier was given: nothing in the chain vouches for it.
            if key_id not in self.trusted:
                raise ChainBroken(
                    sequence,
                    f"signed by key {key_id}, but key {self.in_force} is in force and no "
                    "rotation hands over to it",
                )
            self.retired[self.in_force] = f"entry {sequence}, signed by another key"
        elif key_id not in self.known:
            raise ChainBroken(
                sequence,
                f"signed by key {key_id}, which is neither among the given public keys nor "
                "named by a key rotation",
            )
        self.in_force = key_id
        return self.known[key_id]

    def rotate(self, sequence, subject):
        try:
            new_key = public_key_load(subject["new_public_key"])
            named = subject["new_key_id"]
        except (KeyError, TypeError, ValueError) as error:
            raise ChainBroken(
                sequence, f"a key rotation that names no readable key ({error})"
            ) from error
        new_id = public_key_id(new_key)
        if named != new_id or new_id == self.in_force or new_id in self.retired:
            raise ChainBroken(sequence, f"a key rotation to key {named}, which it may not name")
        self.retired[self.in_force] = f"the key rotation at entry {sequence}"
        self.known[new_id] = new_key
        self.in_force = new_id


# The type each field of an entry has; a chain read from outside may hold anything.
FIELD_TYPES = {
    "sequence": int,
    "at": str,
    "kind": str,
    "subject": dict,
    "previous_digest": str,
    "key_id": str,
    "digest": str,
    "signature": str,
}


def _well_formed(entry, expected):
    try:
        wrong = [n for n, kind in FIELD_TYPES.items() if not isinstance(entry[n], kind)]
    except (KeyError, TypeError) as error:
        raise ChainBroken(expected, f"not a well-formed entry ({error!r})") from error
    if wrong or isinstance(entry["sequence"], bool):
        raise ChainBroken(expected, f"not a well-formed entry ({', '.join(wrong or ['sequence'])})")


def _entry_check(entry, expected, previous):
    """The entry's place in the chain and its digest; the digest, or ChainBroken."""
    _well_formed(entry, expected)
    sequence = entry["sequence"]
    if sequence != expected:
        raise ChainBroken(expected, f"the chain goes on with entry {sequence}: one is missing")
    if entry["previous_digest"] != previous:
        raise ChainBroken(sequence, "does not name the digest of the entry before it")
    if entry["digest"] != entry_digest(entry):
        raise ChainBroken(sequence, "its content does not match its digest")
    return entry["digest"]


def verify_chain(entries, public_keys):
    """Check a whole chain, oldest entry first; return the id of the key in force at its
    end, or raise ChainBroken naming the first entry that fails and why.

    `public_keys`: the keys the verifier trusts (PEM, base64 raw or key objects), such as
    the one served at /transparency/key. A key a rotation introduces is trusted through
    the key that signed the rotation; a key that takes over without a rotation (the one
    before it lost) must be among `public_keys`. A caller that expects the chain to end
    with the served key compares it with the id returned.
    """
    keys = _Keys(public_keys)
    previous = GENESIS
    for expected, entry in enumerate(entries, start=1):
        previous = _entry_check(entry, expected, previous)
        key = keys.signer(expected, entry["key_id"])
        if not signature_valid(key, entry["signature"], canonical(entry_content(entry))):
            raise ChainBroken(expected, f"the signature does not check with key {entry['key_id']}")
        if entry["kind"] == KEY_ROTATION:
            keys.rotate(expected, entry["subject"])
    return keys.in_force
