"""Serve the portal as one machine runs it: gunicorn, and a Celery worker with beat.

The worker is started again whenever it dies, after a short wait that grows if it keeps
dying; gunicorn serves throughout. Only gunicorn's end (or a signal) ends the command.

`make run` calls this. Without Redis the worker takes its jobs from the broker of files
under var/broker (settings.BROKER_DIR), so an admin's job returns at once and shows its
progress, content changes regenerate the exports after their debounce and the nightly
run happens, as they do on a deployment with its own worker and beat services.
"""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from mica.clients import socket_bind_refusal
from mica.site.health import worker_restart_record

# Waits before starting a worker that died again, doubling up to a minute; a worker that
# ran this long before it died starts again at once.
RESTART_WAITS = (1, 2, 4, 8, 16, 32, 60)
RESTART_FORGIVEN_AFTER = 120


class Supervised:
    """The worker (with its beat), started again whenever it dies: a job's crash, a
    message it could not read, the kernel's OOM killer. The web server does not depend
    on it and keeps serving meanwhile; each restart is logged and recorded for
    /healthz/system (mica.site.health, worker-restarted)."""

    def __init__(self, start, stdout):
        self.start, self.stdout = start, stdout
        self.process, self.started_at = start(), time.monotonic()
        self.failures, self.due = 0, None

    def keep_up(self):
        code = self.process.poll()
        if code is None:
            return
        now = time.monotonic()
        if self.due is None:
            if now - self.started_at > RESTART_FORGIVEN_AFTER:
                self.failures = 0
            wait = RESTART_WAITS[min(self.failures, len(RESTART_WAITS) - 1)]
            self.failures += 1
            self.due = now + wait
            self.stdout.write(f"the worker stopped (exit code {code}); starting it in {wait} s")
            worker_restart_record(code)
            self.reap()
        if now >= self.due:
            self.process, self.started_at, self.due = self.start(), now, None

    def reap(self):
        """End what is left of the worker's process group: a worker killed outright leaves
        its beat child behind, which would hold the beat lock and keep sending the
        schedule with nobody to stop it."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Command(BaseCommand):
    help = "Serve the portal with gunicorn, a Celery worker and beat; stop all three on exit."

    def add_arguments(self, parser):
        parser.add_argument("--bind", default="127.0.0.1:8000", help="gunicorn's address.")
        parser.add_argument("--web-workers", type=int, default=2)

    def handle(self, *args, bind, web_workers, **options):
        # As deploy/gunicorn.conf.py does: behind a unix socket clients must be told apart.
        refusal = socket_bind_refusal(
            [bind.removeprefix("unix:")] if bind.startswith("unix:") else []
        )
        if refusal:
            raise CommandError(refusal)
        if settings.JOBS_EAGER:
            raise CommandError("MICA_JOBS_EAGER is set: jobs would run in the web process.")
        worker = Supervised(self._worker, self.stdout)
        web = self._web(bind, web_workers)
        stopping = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: stopping.append(True))
        try:
            while not stopping and web.poll() is None:
                worker.keep_up()
                time.sleep(0.5)
        finally:
            self._stop([worker.process, web])
            worker.reap()
        if web.returncode not in (0, -signal.SIGTERM) and not stopping:
            raise CommandError("gunicorn stopped; the worker was stopped too.")

    def _worker(self):
        # A process group of its own (the worker and its beat), so that what a dead worker
        # leaves behind can be ended with it (Supervised.reap).
        return self._start("celery", self.worker_arguments(), start_new_session=True)

    def worker_arguments(self):
        # One process for the worker and its beat: the embedded broker has one consumer,
        # and the solo pool keeps SQLite to one writer among the jobs. It takes every
        # queue (publish, mail and the rest), so publications run one at a time as the
        # publish worker of a deployment runs them, and the bake forks its renderers.
        # Its beat sends the schedule only while it holds the beat lock (mica.jobs.beat).
        queues = ",".join(queue.name for queue in settings.CELERY_TASK_QUEUES)
        return (
            ["-A", "mica", "worker", "--beat", "--pool", "solo", "--loglevel", "INFO"]
            + ["--queues", queues]
            + ["--schedule", str(settings.BEAT_SCHEDULE_FILE), "--hostname", "embedded@%h"]
        )

    def _web(self, bind, web_workers):
        # The control socket under var/ too: its default, one per user, would be taken by
        # whichever site on the machine started first.
        control = str(settings.VAR_DIR / "gunicorn.ctl")
        return self._start(
            "gunicorn",
            ["mica.wsgi", "--bind", bind, "--workers", str(web_workers), "--access-logfile", "-"]
            + ["--control-socket", control]
            # A unix socket srw-rw----, as deploy/gunicorn.conf.py makes it.
            + ["--umask", "0o117"],
        )

    def _start(self, module, arguments, **options):
        self.stdout.write(f"starting {module}")
        return subprocess.Popen(
            [sys.executable, "-m", module, *arguments],
            cwd=settings.BASE_DIR,
            env=os.environ,
            **options,
        )

    def _stop(self, processes):
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
