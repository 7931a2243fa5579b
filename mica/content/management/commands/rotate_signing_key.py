"""Rotate the site's signing key: the publication log records the new key in an entry
signed by the old one, then the site signs with the new key."""

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from mica import signing
from mica.content.publication_log import publication_log_rotate
from mica.errors import DomainError


class Command(BaseCommand):
    help = (
        "Make a new signing key and append a key rotation to the publication log, signed by "
        "the current key. Embedded profile: var/signing_key is rewritten (0600). With "
        "MICA_SIGNING_KEY set: the new key is printed; set MICA_SIGNING_KEY to it on every "
        "node and restart them (until then the log refuses the old key)."
    )

    def handle(self, *args, **options):
        new_key = Ed25519PrivateKey.generate()
        path = None if settings.SIGNING_KEY else signing.key_file()
        try:
            old_key = signing.signing_key()
            entry = self._rotate(new_key, path, old_key)
        except DomainError as refused:
            raise CommandError(str(refused.message)) from refused
        self.stderr.write(
            f"Key rotation appended as entry {entry.sequence}: key {entry.key_id} hands over "
            f"to key {entry.subject['new_key_id']}."
        )
        if path is None:
            self.stderr.write(
                "Set MICA_SIGNING_KEY to this key on every node and restart them; keep a copy "
                "apart from the backups:"
            )
            self.stdout.write(signing.private_key_text(new_key))
        else:
            self.stderr.write(f"{path} now holds the new key.")

    def _rotate(self, new_key, path, old_key):
        """The rotation's entry and the new key file commit together: should the commit
        fail, the old key file is put back."""
        try:
            with transaction.atomic():
                entry = publication_log_rotate(new_key=new_key)
                if path is not None:
                    signing.key_file_write(new_key, path)
        except BaseException:
            if path is not None:
                signing.key_file_write(old_key, path)
            raise
        return entry
