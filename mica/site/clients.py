"""Who is asking, as the roof sees it: the kernel's one client-address rule.

Sign-in lockouts (django-axes, AXES_CLIENT_IP_CALLABLE) count failures per username and
this address, as the intake limits do, so a trusted proxy is trusted by both alike.
"""

from mica.clients import UNKNOWN
from mica.clients import client_address as _kernel_client_address


def client_address(request):
    """The client's address (mica.clients.client_address), or None when it is unknown:
    axes keeps it in an IP address column, where the kernel's "unknown" does not fit."""
    address = _kernel_client_address(request)
    return None if address == UNKNOWN else address
