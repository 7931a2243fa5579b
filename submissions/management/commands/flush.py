"""Django's flush, with the record's triggers (submissions.append_only), the frozen rows'
triggers (mica.frozen_rows) and the publication log's triggers
(mica.content.publication_log) stood aside while it empties the whole database: the one
maintenance step that removes attempts, frozen versions and log entries, as the test suite
does between transactional tests. The triggers are dropped and made again inside the
flush's own transaction, which only a role that owns the tables can do: no session
setting lifts them."""

from django.core.management.commands import flush
from django.db import DEFAULT_DB_ALIAS, connections

from mica.content.publication_log import publication_log_maintenance
from mica.frozen_rows import frozen_rows_maintenance
from submissions.append_only import record_maintenance


class Command(flush.Command):
    def handle(self, **options):
        connection = connections[options.get("database") or DEFAULT_DB_ALIAS]
        with (
            record_maintenance(connection),
            frozen_rows_maintenance(connection),
            publication_log_maintenance(connection),
        ):
            return super().handle(**options)
