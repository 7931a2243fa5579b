"""The sign-in apps under names of our own, in both languages, in the admin's index."""

from axes.apps import AppConfig as AxesAppConfig
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_totp.apps import DefaultConfig as TOTPAppConfig


class SignInLockoutsConfig(AxesAppConfig):
    verbose_name = _("Sign-in lockouts")


class SecondFactorConfig(TOTPAppConfig):
    verbose_name = _("Second factor")
