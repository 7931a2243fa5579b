"""API tokens: `Authorization: Token <key>`, checked against digests.

Apart from mica.api because DRF imports the authentication classes named in its settings
while rest_framework.views loads, and mica.api imports rest_framework.views.
"""

import re

from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework import exceptions

# A key as the portal issues it (64 hex digits, django-rest-knox) or as DRF issued it
# before (40): anything else is refused before the database is asked.
TOKEN_SHAPE = re.compile(r"[0-9a-f]{40,64}")


class ApiTokenAuthentication(KnoxTokenAuthentication):
    """`Authorization: Token <key>`, the header DRF's tokens used, checked against the
    digests django-rest-knox stores: the database never holds a key, so no one can read
    one back, in the admin or anywhere else."""

    def authenticate_credentials(self, token):
        # A key of another shape (bytes that are not ASCII, a NUL, a huge string) would
        # reach the database, or the decoder, and answer 500.
        try:
            key = token.decode("ascii")
        except UnicodeDecodeError:
            key = ""
        if not TOKEN_SHAPE.fullmatch(key):
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        return super().authenticate_credentials(token)

    def _cleanup_token(self, auth_token):
        # Only the token sent is checked for expiry: knox also reads every other token of
        # the account on each request, a query that grows the API's budget.
        if auth_token.expiry is not None and auth_token.expiry < timezone.now():
            auth_token.delete()
            return True
        return False
