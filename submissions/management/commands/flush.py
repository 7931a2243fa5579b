"""Django's flush, with the record's append-only triggers stood aside while it empties
the whole database (submissions.append_only): the one maintenance step that removes
attempts, as the test suite does between transactional tests."""

from django.core.management.commands import flush
from django.db import DEFAULT_DB_ALIAS, connections

from submissions.append_only import record_maintenance


class Command(flush.Command):
    def handle(self, **options):
        with record_maintenance(connections[options.get("database") or DEFAULT_DB_ALIAS]):
            return super().handle(**options)
