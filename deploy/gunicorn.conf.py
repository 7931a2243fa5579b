"""gunicorn settings for a MICA web node: `gunicorn -c deploy/gunicorn.conf.py mica.wsgi`.

Every value can be overridden from the environment, so one file serves every node.
"""

import multiprocessing
import os

bind = os.environ.get("MICA_BIND", "127.0.0.1:8000")
# Pages come from the bake or the shared cache; a few sync workers per core keep up.
workers = int(os.environ.get("MICA_WEB_WORKERS", multiprocessing.cpu_count() * 2 + 1))
worker_class = "sync"
timeout = int(os.environ.get("MICA_WEB_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak never becomes an outage.
max_requests = 2000
max_requests_jitter = 200
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("MICA_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("MICA_FORWARDED_ALLOW_IPS", "127.0.0.1")
# The control socket beside the node's other state: its default, one per user, would be
# taken by whichever site on the machine started first.
control_socket = os.path.join(os.environ.get("MICA_VAR_DIR", "var"), "gunicorn.ctl")
# A unix socket is made srw-rw----: its owner and group (nginx's user joins the group)
# may connect, nobody else on the machine (gunicorn's default mask leaves it srwxrwxrwx).
umask = 0o117


def on_starting(server):
    """Refuse to start a node that could serve other readers than its siblings do: with
    several web nodes, published builds on this node's disk only (mica.E101); and a node
    that could not tell its clients apart: a unix-socket bind without
    MICA_TRUST_SOCKET_PEER (mica.clients)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
    import django
    from django.core import checks

    django.setup()
    from mica.clients import socket_bind_refusal

    errors = [m for m in checks.run_checks(tags=["compatibility"]) if m.is_serious()]
    errors += filter(None, [socket_bind_refusal(server.cfg.address)])
    if errors:
        for error in errors:
            server.log.error("%s", error)
        raise SystemExit(1)
