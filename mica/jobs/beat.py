"""One beat for the whole system: the schedule is sent only by the beat holding a lease.

Two beats started against one database (a second `celery beat`, a second `manage.py
serve`, a beat left running on an old machine) would send every heartbeat, reap, sweep
and nightly regeneration twice. Each beat's scheduler takes the database lease
(`BeatLease`, services.beat_lease_take) before every tick and renews it; while another
holds it, this one sends nothing, says so in its log, and takes over once the other lets
it go (on stopping) or stops renewing it (killed) for BEAT_LEASE_SECONDS.
"""

import logging
import multiprocessing
import os
import socket
import uuid

from celery.beat import PersistentScheduler
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections

logger = logging.getLogger("celery.beat")


def _forget_inherited_connections():
    # An embedded beat (worker --beat) is a process forked from the worker, which closed
    # the sockets it inherited: the connection objects copied from the worker must not be
    # used, nor closed over them.
    if multiprocessing.parent_process() is None:
        return
    for connection in connections.all(initialized_only=True):
        connection.connection = None


def _close_old_connections():
    # Beat is a long-lived process outside any request: drop a connection the database
    # closed (a restart) or one older than CONN_MAX_AGE, never one inside a transaction.
    if not any(c.in_atomic_block for c in connections.all(initialized_only=True)):
        close_old_connections()


class LeasedScheduler(PersistentScheduler):
    """Celery's file-backed scheduler, sending only while it holds the beat lease."""

    def __init__(self, *args, **kwargs):
        self.lease_holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lease_held = None  # not yet known
        _forget_inherited_connections()
        super().__init__(*args, **kwargs)

    def _lease(self):
        # Within the app: the scheduler is loaded by beat before the app registry is ready.
        from mica.jobs.selectors import beat_lease_get
        from mica.jobs.services import beat_lease_take

        _close_old_connections()
        try:
            held = beat_lease_take(holder=self.lease_holder, seconds=settings.BEAT_LEASE_SECONDS)
            other = None if held else beat_lease_get()
        except DatabaseError as exc:
            logger.error(
                "Beat %s cannot reach the database (%s); it sends nothing.", self.lease_holder, exc
            )
            connections.close_all()
            held, other = False, None
        if held and self.lease_held is not True:
            logger.warning(
                "Beat %s holds the beat lock (the lease in the database); it sends the schedule.",
                self.lease_holder,
            )
        elif not held and other is not None and self.lease_held is not False:
            logger.warning(
                "Beat %s waits: another beat (%s) holds the beat lock until %s. Only one beat "
                "sends the schedule; this one takes over when that one stops.",
                self.lease_holder,
                other.holder,
                other.expires_at.isoformat(),
            )
        self.lease_held = held
        return held

    def _renew_every(self):
        return max(1.0, settings.BEAT_LEASE_SECONDS / 3)

    def tick(self, *args, **kwargs):
        if not self._lease():
            return self._renew_every()
        return min(super().tick(*args, **kwargs), self._renew_every())

    def close(self):
        # Within the app, as above.
        from mica.jobs.services import beat_lease_release

        if self.lease_held:
            try:
                beat_lease_release(holder=self.lease_holder)
                logger.warning("Beat %s let the beat lock go.", self.lease_holder)
            except DatabaseError as exc:
                logger.error("Beat %s could not let the beat lock go (%s).", self.lease_holder, exc)
        super().close()
