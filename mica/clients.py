"""The address of the client a request comes from, trusting only configured proxies.

`X-Forwarded-For` is written by whoever sends the request, so it is read only when
the request arrives from one of `settings.TRUSTED_PROXIES` (`MICA_TRUSTED_PROXIES`,
addresses or CIDR networks). Each proxy appends the address it received the request
from, so the right-most entry that is not itself a trusted proxy is the client; the
entries to its left are the client's to invent and never count. Anyone else is known
by `REMOTE_ADDR`.

Intake limits (submissions.throttle) and login throttling key on this address; it is
in the kernel so every floor can call it (mica.site.clients offers it to the roof).
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

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


def client_address(request):
    """The client's address as text: REMOTE_ADDR, or what a trusted proxy says it saw."""
    remote = _address(request.META.get("REMOTE_ADDR") or "")
    if remote is None:
        return UNKNOWN
    networks = _trusted_networks(tuple(getattr(settings, "TRUSTED_PROXIES", ())))
    if not _trusted(remote, networks):
        return str(remote)
    hops = [hop for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    client = remote
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            # Not written by a proxy of ours: nothing further left can be believed.
            break
        client = address
        if not _trusted(address, networks):
            break
    return str(client)
