"""What the admin calls records that other libraries define, in the reader's language.

django-otp names its device and the device's fields in English strings that are never
translated, and django-axes names its records in English sentences; Django stores each
permission's name in English when the database is migrated. The admin shows them in
the reader's language instead: the names below are given once the apps are loaded (the
fields' and models' labels, never what a migration records), and a permission is
labelled from its action and its model's translated name rather than the stored name,
so no data migration has to rewrite the names other apps keep creating.
"""

from django.templatetags.static import static
from django.utils.formats import date_format
from django.utils.html import format_html
from django.utils.timezone import localtime
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

# The TOTP device's fields in the portal's words (the admin shows the device read only).
DEVICE_FIELDS = {
    "user": _("account"),
    "name": pgettext_lazy("second-factor device", "name"),
    "confirmed": _("ready for use"),
    "created_at": _("enrolled"),
    "last_used_at": _("last used"),
    "throttling_failure_timestamp": _("last refused code"),
    "throttling_failure_count": _("refused codes in a row"),
    "key": _("secret key"),
    "step": _("time step (seconds)"),
    "t0": _("start of counting (Unix time)"),
    "digits": _("digits"),
    "tolerance": _("steps of tolerance"),
    "drift": _("clock drift (steps)"),
    "last_t": _("time step of the last code"),
}

# A yes/no column's icon, said in words to whoever does not see it.
BOOLEAN_WORDS = {True: _("Yes"), False: _("No"), None: _("Unknown")}

# The default permissions Django makes for every model, by the start of their codename.
PERMISSION_ACTIONS = {
    "add": _("Can add %(name)s"),
    "change": _("Can change %(name)s"),
    "delete": _("Can delete %(name)s"),
    "view": _("Can view %(name)s"),
}


def _device_name(device):
    return gettext("Authenticator app of %(account)s") % {"account": device.user}


def _when(moment):
    return date_format(localtime(moment), "DATETIME_FORMAT") if moment else "—"


def _sign_in(record):
    return gettext("Sign-in of %(account)s, %(when)s") % {
        "account": record.username,
        "when": _when(record.attempt_time),
    }


def _failed_sign_in(record):
    return gettext("Failed sign-in of %(account)s, %(when)s") % {
        "account": record.username,
        "when": _when(record.attempt_time),
    }


def _lockout_count(record):
    return gettext("Failed sign-ins of %(account)s from %(address)s") % {
        "account": record.username,
        "address": record.ip_address,
    }


def second_factor_devices_named():
    """django-otp's TOTP device under the portal's names (SecondFactorConfig.ready)."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    options = TOTPDevice._meta
    options.verbose_name = _("second-factor device")
    options.verbose_name_plural = _("second-factor devices")
    for name, label in DEVICE_FIELDS.items():
        options.get_field(name).verbose_name = label
    TOTPDevice.__str__ = _device_name


def sign_in_records_named():
    """django-axes' records named by what they are, in the reader's language
    (SignInLockoutsConfig.ready); its own names are English sentences."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    AccessLog.__str__ = _sign_in
    AccessFailureLog.__str__ = _failed_sign_in
    AccessAttempt.__str__ = _lockout_count


def api_token_digests_named():
    """django-rest-knox's token table: the portal's ApiToken is a proxy of it, and its
    permissions are listed beside ApiToken's."""
    from knox.models import AuthToken

    AuthToken._meta.verbose_name = _("API token digest")
    AuthToken._meta.verbose_name_plural = _("API token digests")


def staff_groups_named():
    """Django's groups of staff accounts: the catalogue's "group" of references, one
    msgid with them, would otherwise name them in Korean as a bundle (묶음)."""
    from django.contrib.auth.models import Group

    Group._meta.verbose_name = pgettext_lazy("staff accounts", "group")
    Group._meta.verbose_name_plural = pgettext_lazy("staff accounts", "groups")


def boolean_icons_named():
    """Django's admin gives a yes/no icon the Python value as its text alternative
    ("True", "False", "None") whatever the language; ours says yes or no in the reader's.
    Every read-only yes/no in the admin (lists, forms, inlines) goes through this one
    function of Django's, which it imports when it renders."""
    from django.contrib.admin.templatetags import admin_list

    def boolean_icon(value):
        icon = {True: "yes", False: "no", None: "unknown"}[value]
        return format_html(
            '<img src="{}" alt="{}">', static(f"admin/img/icon-{icon}.svg"), BOOLEAN_WORDS[value]
        )

    admin_list._boolean_icon = boolean_icon


def model_label(model):
    """A model's name for a person; a revision table of django-simple-history is named
    after the model it keeps the revisions of."""
    kept = getattr(model, "instance_type", None)
    if kept is not None:
        return gettext("historical %(name)s") % {"name": kept._meta.verbose_name}
    return str(model._meta.verbose_name)


def permission_label(permission):
    """ "<app> | <what it allows>" in the reader's language, whatever name was stored."""
    model = permission.content_type.model_class()
    if model is None:  # its model is gone: the stored name is all there is
        return permission.name
    action, _sep, model_name = permission.codename.partition("_")
    if action in PERMISSION_ACTIONS and model_name == model._meta.model_name:
        allowed = PERMISSION_ACTIONS[action] % {"name": model_label(model)}
    else:
        allowed = dict(model._meta.permissions).get(permission.codename, permission.name)
    return f"{model._meta.app_config.verbose_name} | {allowed}"
