"""The address of the client a request comes from, trusting only configured proxies.

`X-Forwarded-For` is written by whoever sends the request, so it is read only when
the request arrives from one of `settings.TRUSTED_PROXIES` (`MICA_TRUSTED_PROXIES`,
addresses or CIDR networks). Each proxy appends the address it received the request
from, so the right-most entry that is not itself a trusted proxy is the client; the
entries to its left are the client's to invent and never count. Anyone else is known
by `REMOTE_ADDR`.

Behind a unix socket (gunicorn bound to `unix:/path`) there is no `REMOTE_ADDR` at all:
the peer is the proxy on the same machine, and it is believed only when
`settings.TRUST_SOCKET_PEER` (`MICA_TRUST_SOCKET_PEER`) says so; otherwise every client
would read as one, and deploy/gunicorn.conf.py refuses that bind at start.

Intake limits (submissions.throttle) and login throttling (mica.site.clients) key on
`address_counted` of this address, one rule for both: an IPv6 client counts by its /64
network, which one subscriber holds whole. It is in the kernel so every floor can call it.
"""

import ipaddress
import os
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext

UNKNOWN = "unknown"


@lru_cache(maxsize=8)
def _trusted_networks(entries):
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as bad:
            raise ImproperlyConfigured(
                f"MICA_TRUSTED_PROXIES: {entry!r} is not an address or a CIDR network"
            ) from bad
    return tuple(networks)


def _address(text):
    """An address from a header entry (`1.2.3.4`, `1.2.3.4:5678`, `[2001:db8::1]:443`)."""
    text = text.strip().strip('"')
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:  # IPv4 with a port; IPv6 has more than one colon
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _trusted(address, networks):
    return any(address.version == net.version and address in net for net in networks)


def _forwarded_client(request, proxy, networks):
    """The client a trusted `proxy` names: walk X-Forwarded-For from the right while its
    entries are trusted proxies themselves; None when the proxy named nobody usable."""
    hops = [hop for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    client = proxy
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # Not written by a proxy of ours: nothing further left can be believed.
            break
        client = address
        if not _trusted(address, networks):
            break
    return client


def client_address(request):
    """The client's address as text: REMOTE_ADDR, or what a trusted proxy says it saw."""
    networks = _trusted_networks(tuple(getattr(settings, "TRUSTED_PROXIES", ())))
    remote = _address(request.META.get("REMOTE_ADDR") or "")
    if remote is None:
        # A unix socket's peer has no address: it is the proxy only if we are told so.
        if not getattr(settings, "TRUST_SOCKET_PEER", False):
            return UNKNOWN
        client = _forwarded_client(request, None, networks)
        return UNKNOWN if client is None else str(client)
    if not _trusted(remote, networks):
        return str(remote)
    return str(_forwarded_client(request, remote, networks))


def address_counted(address):
    """What limits count a client address as: an IPv4 address itself, an IPv6 one as its
    /64 network (written as the network's first address, so it fits an address column),
    since one subscriber holds a whole /64 and could step through it."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address or UNKNOWN
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False).network_address)
    return str(parsed)


def socket_bind_refusal(addresses):
    """Why a server bound to `addresses` (gunicorn's parsed binds: a unix socket is a
    path, TCP a tuple) must not start, or None: behind a unix socket without a trusted
    peer every client would read as one."""
    sockets = [address for address in addresses if isinstance(address, str | bytes)]
    if not sockets or getattr(settings, "TRUST_SOCKET_PEER", False):
        return None
    return gettext(
        "gunicorn is bound to the unix socket %(socket)s, where clients have no address: "
        "every client would count as one in the intake limits and the sign-in lockouts. "
        "Set MICA_TRUST_SOCKET_PEER=1 so that the X-Forwarded-For of the proxy at the "
        "socket's other end names them (the manual's deployers' guide, “A reverse proxy in "
        "front”), or bind to a TCP address."
    ) % {"socket": os.fsdecode(sockets[0])}
