"""Staff access records: API tokens (as digests) and second-factor enrolment codes.

Neither holds a secret anyone could use: a token is kept as django-rest-knox's digest
and its first characters, an enrolment code as its SHA-256 digest. Both are shown once,
to whoever issues them.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from knox.models import AuthToken

# What the admin shows of a token: enough to tell tokens apart, far too little to use.
TOKEN_PREFIX_SHOWN = 8


class ApiToken(AuthToken):
    """django-rest-knox's token under the portal's own names, in both languages."""

    class Meta:
        proxy = True
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    @property
    def prefix(self):
        return f"{self.token_key[:TOKEN_PREFIX_SHOWN]}…"

    def __str__(self):
        # The admin's log and its pages name a token by this: never the digest or more.
        return f"{self.prefix} ({self.user})"


class EnrolmentCode(models.Model):
    """A one-time code that lets one account enrol a second-factor device, issued by
    another administrator (or on the server) and valid for a short time: a password
    alone cannot enrol an authenticator."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("account"),
    )
    digest = models.CharField(_("digest"), max_length=64, unique=True, editable=False)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("issued by"),
        help_text=_("Empty when issued on the server, by manage.py."),
    )
    issued_at = models.DateTimeField(_("issued at"), editable=False)
    expires_at = models.DateTimeField(_("expires at"), editable=False)
    used_at = models.DateTimeField(_("used at"), null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("second-factor enrolment code")
        verbose_name_plural = _("second-factor enrolment codes")
        ordering = ["-issued_at"]

    def __str__(self):
        return str(self.user)


class ApiTokenIssue(models.Model):
    """Who issued an API token, for which account and when: the token list names the
    issuer, and the record stays after the token is revoked or expires, so a token
    minted for another account leaves a trace."""

    token = models.OneToOneField(
        ApiToken,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="issue",
        verbose_name=_("API token"),
    )
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("account"),
    )
    prefix = models.CharField(_("key begins with"), max_length=16, editable=False)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="+",
        verbose_name=_("issued by"),
    )
    issued_at = models.DateTimeField(_("issued at"), editable=False)

    class Meta:
        verbose_name = _("API token issue")
        verbose_name_plural = _("API token issues")
        ordering = ["-issued_at"]

    def __str__(self):
        return f"{self.prefix} ({self.account})"
