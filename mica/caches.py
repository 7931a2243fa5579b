"""Cache backends of our own: a database cache whose counters are safe to share.

Django's database cache increments by reading the value and writing it back, so two
processes counting at once can both read 19 and both write 20. The intake limits
(submissions.throttle) count in it on the embedded default, where every web process
must see one count; here an increment locks its row first.
"""

import base64
import pickle

from django.core.cache.backends.db import DatabaseCache
from django.core.management import call_command
from django.db import connections, models, router, transaction
from django.utils.timezone import now


class CountingDatabaseCache(DatabaseCache):
    """`incr` is one step: no two increments of a key read the same value."""

    def incr(self, key, delta=1, version=None):
        key = self.make_and_validate_key(key, version=version)
        db = router.db_for_write(self.cache_model_class)
        connection = connections[db]
        quote = connection.ops.quote_name
        table, key_column = quote(self._table), quote("cache_key")
        with transaction.atomic(using=db), connection.cursor() as cursor:
            # A write first: it locks the row on PostgreSQL and takes the write lock on
            # SQLite, so the read and the write below happen as one step. It keeps the
            # expiry, as an increment must.
            cursor.execute(
                f"UPDATE {table} SET {quote('expires')} = {quote('expires')} "
                f"WHERE {key_column} = %s",
                [key],
            )
            cursor.execute(
                f"SELECT {quote('value')}, {quote('expires')} FROM {table} WHERE {key_column} = %s",
                [key],
            )
            row = cursor.fetchone()
            if row is not None and _expires(row[1], connection) < now():
                row = None
            if row is None:
                raise ValueError(f"Key '{key}' not found.")
            value = pickle.loads(base64.b64decode(connection.ops.process_clob(row[0]).encode()))
            value += delta
            cursor.execute(
                f"UPDATE {table} SET {quote('value')} = %s WHERE {key_column} = %s",
                [base64.b64encode(pickle.dumps(value, self.pickle_protocol)).decode("latin1"), key],
            )
        return value


def _expires(value, connection):
    """The stored expiry as an aware datetime, converted as DatabaseCache.get_many does."""
    expression = models.Expression(output_field=models.DateTimeField())
    converters = connection.ops.get_db_converters(expression) + expression.get_db_converters(
        connection
    )
    for converter in converters:
        value = converter(value, expression, connection)
    return value


def cache_tables_create(using="default", **kwargs):
    """A post_migrate receiver: the tables of the database caches exist wherever the
    schema does (a fresh `make run`, a test database); existing tables are kept."""
    call_command("createcachetable", database=using, verbosity=0)
