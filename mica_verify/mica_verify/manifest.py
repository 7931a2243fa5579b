"""The export set against its manifest, and the manifest against its signature."""

import base64
import binascii
import hashlib

from mica_verify.chain import key_from_pem, signature_valid
from mica_verify.source import KEY, MANIFEST, SIGNATURE, Missing

AREA_FILES = "files against the manifest"
AREA_SIGNATURE = "manifest signature"


def files_check(source, report):
    """Every file the manifest lists, its size and SHA-256; the manifest, or None."""
    try:
        manifest = source.json(MANIFEST)
    except (Missing, ValueError) as error:
        report.fail(AREA_FILES, MANIFEST, str(error))
        return None
    for entry in manifest.get("files", []):
        name = entry.get("name", "?")
        try:
            data = source.read(name)
        except Missing as error:
            report.fail(AREA_FILES, name, str(error))
            continue
        report.check(
            AREA_FILES,
            f"{name} size",
            len(data) == entry.get("size"),
            f"manifest says {entry.get('size')} bytes, the file has {len(data)}",
        )
        digest = hashlib.sha256(data).hexdigest()
        report.check(
            AREA_FILES,
            f"{name} sha256",
            digest == entry.get("sha256"),
            f"manifest says {entry.get('sha256')}, the file hashes to {digest}",
        )
    return manifest


def signature_check(source, report, signers):
    """manifest.json.sig is an Ed25519 signature of manifest.json's exact bytes by the
    served key or another key the log vouches for (`signers`: {key id: public key})."""
    try:
        manifest = source.read(MANIFEST)
        signature = source.read(SIGNATURE).decode("ascii").strip()
        served = key_from_pem(source.read(KEY))
    except (Missing, ValueError, UnicodeDecodeError) as error:
        report.fail(AREA_SIGNATURE, SIGNATURE, str(error))
        return
    keys = {**signers, "served": served}
    try:
        base64.b64decode(signature, validate=True)
    except binascii.Error:
        report.fail(AREA_SIGNATURE, SIGNATURE, "not base64")
        return
    by = [key_id for key_id, key in keys.items() if signature_valid(key, signature, manifest)]
    report.check(
        AREA_SIGNATURE,
        SIGNATURE,
        bool(by),
        "does not verify with the served key nor any key of the log",
    )
