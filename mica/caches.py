"""Cache backends of our own: a database cache whose counters are safe to share, and a
Redis cache that a lost Redis turns into misses instead of server errors.

Django's database cache increments by reading the value and writing it back, so two
processes counting at once can both read 19 and both write 20. The intake limits
(submissions.throttle) count in it on the embedded default, where every web process
must see one count; here an increment locks its row first.

The page cache and the fragments are only ever a shortcut: a page that misses them
renders afresh. Django's Redis cache raises when Redis does not answer, which made
every cached page a 500 while Redis was down; ResilientRedisCache answers a miss.
"""

import base64
import functools
import logging
import pickle
import threading
import time

import redis
from django.core.cache.backends.db import DatabaseCache
from django.core.cache.backends.redis import RedisCache
from django.core.management import call_command
from django.db import connections, models, router, transaction
from django.utils.timezone import now


class CountingDatabaseCache(DatabaseCache):
    """`incr` is one step: no two increments of a key read the same value; a full table
    drops the entries that expire first, whatever their keys."""

    def _cull(self, db, cursor, now, num):
        # Django's cull deletes the keys that sort first, so one family of keys (the
        # intake's "address" counts before its "email" counts) would go entirely before
        # another lost any. The entries that expire first go instead, whole seconds at a
        # time (an expiry is kept to the second), so no key wins a tie by its name.
        connection = connections[db]
        quote = connection.ops.quote_name
        table, expires = quote(self._table), quote("expires")
        cursor.execute(
            f"DELETE FROM {table} WHERE {expires} < %s",
            [connection.ops.adapt_datetimefield_value(now)],
        )
        remaining = num - cursor.rowcount
        if self._cull_frequency == 0 or remaining <= self._max_entries:
            return
        cursor.execute(
            f"SELECT {expires} FROM {table} ORDER BY {expires} LIMIT 1 OFFSET %s",
            [max(remaining // self._cull_frequency - 1, 0)],
        )
        row = cursor.fetchone()
        if row is not None:
            cursor.execute(f"DELETE FROM {table} WHERE {expires} <= %s", [row[0]])

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


logger = logging.getLogger(__name__)

# After Redis failed to answer, a process leaves it alone this long before trying
# again: a Redis that drops packets would otherwise cost every request its timeouts.
RETRY_AFTER_SECONDS = 2.0
# What a lost or overloaded Redis raises (connection refused, reset, timed out).
UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)


def _unreachable_gives(answer):
    """The method answers `answer` (a value, or a callable of the call's arguments)
    while Redis cannot be reached, as a cache that holds nothing would."""

    def decorate(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            if self.unreachable():
                return answer(*args, **kwargs) if callable(answer) else answer
            try:
                return method(self, *args, **kwargs)
            except UNREACHABLE as exc:
                self._failed(exc)
                return answer(*args, **kwargs) if callable(answer) else answer

        return wrapper

    return decorate


def _default_of_get(key, default=None, version=None):
    return default


def _missing_key(key, delta=1, version=None):
    raise ValueError(f"Key '{key}' not found.")


class ResilientRedisCache(RedisCache):
    """Django's Redis cache, where an unreachable Redis is a cache that holds nothing:
    reads miss, writes are dropped, and one warning a spell is logged."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._down_until = 0.0
        self._lock = threading.Lock()

    def unreachable(self):
        """Whether Redis failed to answer within the last RETRY_AFTER_SECONDS."""
        return time.monotonic() < self._down_until

    def _failed(self, exc):
        with self._lock:
            first = not self.unreachable()
            self._down_until = time.monotonic() + RETRY_AFTER_SECONDS
        if first:
            logger.warning(
                "cache %s unreachable (%s: %s); pages render uncached meanwhile",
                self._servers[0].rsplit("@", 1)[-1],
                type(exc).__name__,
                exc,
            )

    add = _unreachable_gives(False)(RedisCache.add)
    get = _unreachable_gives(_default_of_get)(RedisCache.get)
    set = _unreachable_gives(None)(RedisCache.set)
    touch = _unreachable_gives(False)(RedisCache.touch)
    delete = _unreachable_gives(False)(RedisCache.delete)
    get_many = _unreachable_gives(lambda *args, **kwargs: {})(RedisCache.get_many)
    has_key = _unreachable_gives(False)(RedisCache.has_key)
    incr = _unreachable_gives(_missing_key)(RedisCache.incr)
    set_many = _unreachable_gives(lambda *args, **kwargs: [])(RedisCache.set_many)
    delete_many = _unreachable_gives(None)(RedisCache.delete_many)
    clear = _unreachable_gives(False)(RedisCache.clear)
