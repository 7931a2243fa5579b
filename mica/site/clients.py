"""Who is asking, as the roof sees it: the kernel's one client-address rule.

Sign-in lockouts (django-axes, AXES_CLIENT_IP_CALLABLE) count failures per username and
this address, as the intake limits do: a trusted proxy (or a trusted unix-socket peer)
is trusted by both alike, and an IPv6 client counts by its /64 network by both alike.
"""

from mica.clients import UNKNOWN, address_counted
from mica.clients import client_address as _kernel_client_address


def client_address(request):
    """The client's address as counted (mica.clients.address_counted: an IPv6 client as
    its /64 network's first address), or None when it is unknown: axes keeps it in an IP
    address column, where the kernel's "unknown" does not fit."""
    address = _kernel_client_address(request)
    return None if address == UNKNOWN else address_counted(address)
