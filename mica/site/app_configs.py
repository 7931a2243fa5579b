"""The sign-in apps under names of our own, in both languages, in the admin's index."""

from axes.apps import AppConfig as AxesAppConfig
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_totp.apps import DefaultConfig as TOTPAppConfig


class SignInLockoutsConfig(AxesAppConfig):
    verbose_name = _("Sign-in lockouts")

    def ready(self):
        super().ready()
        from mica.admin_names import sign_in_records_named

        sign_in_records_named()


class SecondFactorConfig(TOTPAppConfig):
    verbose_name = _("Second factor")

    def ready(self):
        super().ready()
        from mica.admin_names import second_factor_devices_named

        second_factor_devices_named()
