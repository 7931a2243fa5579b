"""The one client-address rule of intake limits and sign-in lockouts (mica.clients), behind
a unix socket (issue 33, item 7) and for IPv6 networks (item 6).

A real gunicorn on a unix socket is in tests/deploy/test_unix_socket.py."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import RequestFactory

from mica.clients import address_counted, client_address, socket_bind_refusal
from mica.site.clients import client_address as lockout_address
from submissions import throttle
from tests.factories import challenge_payload

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "forwarded, expected",
    [
        ("192.0.2.1", "192.0.2.1"),
        ("198.51.100.9, 192.0.2.1", "192.0.2.1"),  # left of what our proxy wrote: invented
        ("192.0.2.1, 10.0.0.3", "192.0.2.1"),  # through a trusted proxy first
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("not-an-address", "unknown"),
        ("", "unknown"),
    ],
)
def test_a_trusted_socket_peer_is_the_proxy(settings, forwarded, expected):
    """Finding: with gunicorn on a unix socket REMOTE_ADDR is empty and every client reads
    as one. With MICA_TRUST_SOCKET_PEER the peer is the proxy and its X-Forwarded-For names
    the client, by the rule a trusted proxy's does."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    settings.TRUST_SOCKET_PEER = True
    request = RequestFactory().get("/", REMOTE_ADDR="", HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


@pytest.mark.parametrize("remote", ["", "/run/mica/nginx.sock"])
def test_an_untrusted_socket_peer_names_nobody(settings, remote):
    settings.TRUST_SOCKET_PEER = False
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert client_address(request) == "unknown"


def test_trusting_the_socket_peer_trusts_no_tcp_client(settings):
    """The setting concerns the socket's peer only: over TCP an untrusted sender's
    X-Forwarded-For is still ignored."""
    settings.TRUST_SOCKET_PEER = True
    request = RequestFactory().get("/", REMOTE_ADDR="203.0.113.5", HTTP_X_FORWARDED_FOR="192.0.2.1")
    assert client_address(request) == "203.0.113.5"


@pytest.mark.parametrize(
    "address, counted",
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"),
        ("2001:db8:1:2::1", "2001:db8:1:2::"),
        ("2001:db8:1:3::1", "2001:db8:1:3::"),
        ("unknown", "unknown"),
        ("", "unknown"),
    ],
)
def test_an_ipv6_client_counts_as_its_64(address, counted):
    assert address_counted(address) == counted


def test_intake_and_sign_in_count_the_same_client(settings):
    """One code path: the address the lockouts key on is the one the intake limits count."""
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    request = RequestFactory().get(
        "/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="2001:db8:7:7::42"
    )
    assert lockout_address(request) == address_counted(client_address(request)) == "2001:db8:7:7::"
    assert lockout_address(RequestFactory().get("/", REMOTE_ADDR="")) is None


def file(client, n, address):
    body = challenge_payload(idempotency_key=f"v6-{n}", contact_email=f"filer{n}@example.org")
    return client.post(
        "/api/v1/challenges/",
        json.dumps(body),
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def test_filings_from_one_ipv6_64_share_its_limit(client, canonical_content):
    """The intake limits count an IPv6 client by its /64 (the rule sign-in lockouts now
    share): stepping through its addresses gains nothing; the next /64 is someone else."""
    limit = throttle.LIMITS["address"]
    statuses = [file(client, n, f"2001:db8:1:2::{n + 1:x}").status_code for n in range(limit + 1)]
    assert statuses == [201] * limit + [429]
    assert file(client, 99, "2001:db8:1:3::1").status_code == 201


def test_a_unix_socket_bind_is_refused_without_a_trusted_peer(settings):
    settings.TRUST_SOCKET_PEER = False
    refusal = socket_bind_refusal(["/run/mica/web.sock", ("127.0.0.1", 8000)])
    assert "/run/mica/web.sock" in refusal and "MICA_TRUST_SOCKET_PEER=1" in refusal
    assert socket_bind_refusal([("127.0.0.1", 8000)]) is None
    settings.TRUST_SOCKET_PEER = True
    assert socket_bind_refusal(["/run/mica/web.sock"]) is None


def test_manage_py_serve_refuses_a_unix_socket_alike(settings):
    """`manage.py serve --bind unix:...` starts gunicorn without deploy/gunicorn.conf.py:
    it refuses the bind itself, before starting anything."""
    settings.TRUST_SOCKET_PEER = False
    with pytest.raises(CommandError, match="MICA_TRUST_SOCKET_PEER=1"):
        call_command("serve", bind="unix:/run/mica/web.sock")
