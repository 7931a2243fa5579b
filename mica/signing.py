"""The site's Ed25519 signing key: it signs the publication log (mica.content.publication_log)
and the export set's manifest (manifest.json.sig).

Production sets MICA_SIGNING_KEY (the same on every node that publishes): the private key
in PEM, or in base64 (its raw 32 bytes, or its PKCS#8 DER). The embedded profile, where it
is unset, keeps the key in var/signing_key, made 0600 on first use and reused after.
`check --deploy` refuses a production profile without the key; nothing here ever prints
or logs the private key but `private_key_text`, for the operator who asked for it.

Read on every use, never cached: a rotation (manage.py rotate_signing_key) rewrites the
embedded key file, and every process signs with the new key at once.
"""

import base64
import binascii
import os
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core import checks
from django.utils.translation import gettext as _

from mica.errors import DomainError
from mica.publication_chain import public_key_id, public_key_pem


class SigningKeyUnavailable(DomainError):
    """No signing key is configured, or the configured one cannot be read."""


def _private_key_parse(text):
    """An Ed25519 private key from PEM or base64 text; ValueError for anything else."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_private_key(text.encode("ascii"), password=None)
        else:
            raw = base64.b64decode(text, validate=True)
            if len(raw) == 32:
                key = Ed25519PrivateKey.from_private_bytes(raw)
            else:
                key = serialization.load_der_private_key(raw, password=None)
    except (ValueError, TypeError, binascii.Error, UnicodeEncodeError) as error:
        raise ValueError(type(error).__name__) from error
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 key")
    return key


def private_key_pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")


def private_key_text(key):
    """The key on one line (its raw 32 bytes in base64), as MICA_SIGNING_KEY takes it."""
    raw = key.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    return base64.b64encode(raw).decode("ascii")


def key_file():
    """The embedded profile's key file, or None where the key must be set (production)."""
    return Path(settings.SIGNING_KEY_FILE) if settings.SIGNING_KEY_FILE else None


def key_file_write(key, path=None):
    """Write `key` into the key file in one step, readable by its owner only from the
    start: a reader sees the old key or the new one, never a part."""
    path = Path(path or key_file())
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(prefix=".signing_key-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as stream:  # mkstemp makes it 0600
            stream.write(private_key_pem(key))
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _key_file_make(path):
    """Make the key file once: of two processes starting together, one key wins."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, partial = tempfile.mkstemp(prefix=".signing_key-", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as stream:
            stream.write(private_key_pem(Ed25519PrivateKey.generate()))
        os.link(partial, path)  # fails if another process made it meanwhile
    except FileExistsError:
        pass
    finally:
        Path(partial).unlink(missing_ok=True)


def _from_file(path):
    try:
        if not path.exists():
            _key_file_make(path)
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)  # an older copy, or a hand, left it wider
        return _private_key_parse(path.read_text(encoding="ascii"))
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise SigningKeyUnavailable(
            _("The signing key %(path)s cannot be made or read as an Ed25519 private key.")
            % {"path": path}
        ) from error


def signing_key():
    """The site's private key (MICA_SIGNING_KEY, else the embedded key file)."""
    if settings.SIGNING_KEY:
        try:
            return _private_key_parse(settings.SIGNING_KEY)
        except ValueError as error:
            raise SigningKeyUnavailable(
                _("MICA_SIGNING_KEY is not an Ed25519 private key in PEM or base64.")
            ) from error
    path = key_file()
    if path is None:
        raise SigningKeyUnavailable(
            _(
                "Set MICA_SIGNING_KEY: the publication log and the export manifest are "
                "signed with it."
            )
        )
    return _from_file(path)


def sign(data, key=None):
    """The detached Ed25519 signature of `data` (bytes), in base64."""
    return base64.b64encode((key or signing_key()).sign(data)).decode("ascii")


def public_key(key=None):
    return (key or signing_key()).public_key()


def key_id(key=None):
    """The first 16 hex digits of the SHA-256 of the raw public key."""
    return public_key_id(public_key(key))


def public_pem(key=None):
    return public_key_pem(public_key(key))


@checks.register(checks.Tags.security, deploy=True)
def production_has_a_signing_key(app_configs, **kwargs):
    """Production signs with a key it is given, the same on every node, never one made on
    one machine."""
    if settings.SIGNING_KEY or key_file() is not None:
        return []
    return [
        checks.Error(
            "MICA_SIGNING_KEY is not set: publications cannot be signed.",
            hint="Set MICA_SIGNING_KEY to an Ed25519 private key (PEM, or base64 of its raw "
            "32 bytes), the same on every node; see the manual, Exports.",
            id="mica.E110",
        )
    ]


@checks.register(checks.Tags.security)
def the_signing_key_reads(app_configs, **kwargs):
    """A key that is set must read; several nodes must not each make a key of their own."""
    if settings.SIGNING_KEY:
        try:
            _private_key_parse(settings.SIGNING_KEY)
        except ValueError:
            return [
                checks.Error(
                    "MICA_SIGNING_KEY is not an Ed25519 private key in PEM or base64.",
                    id="mica.E111",
                )
            ]
    elif settings.WEB_NODES > 1 and key_file() is not None:
        return [
            checks.Warning(
                f"MICA_WEB_NODES is {settings.WEB_NODES} but MICA_SIGNING_KEY is not set: "
                f"each machine would sign with a key of its own ({key_file()}).",
                hint="Set MICA_SIGNING_KEY, the same on every node.",
                id="mica.W112",
            )
        ]
    return []
