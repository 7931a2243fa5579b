"""Staff access: second-factor enrolment codes, the notices every enrolment and device
removal sends, API tokens issued in a verified session, and why a TOTP code was refused.

A password alone cannot enrol an authenticator: enrolment takes a one-time code that
another administrator issued (or `manage.py issue_enrolment_code` on the server, for
the first one), valid for SECOND_FACTOR_ENROLMENT_MINUTES. Each issue, enrolment and
removal is e-mailed to the account and to every other administrator, so a stolen
password that gets this far is seen at once.
"""

import datetime
import hashlib
import secrets
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import get_digest_token
from knox.settings import CONSTANTS

from mica.errors import PermissionRefused
from mica.site.models import ApiToken, ApiTokenIssue, EnrolmentCode
from submissions.outbox import _bilingual, outbox_queue

# 32 letters and digits without look-alikes (no 0/O, 1/I): 16 of them, 80 random bits.
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 16

NOT_AN_ADMINISTRATOR = gettext_lazy(
    "Only a superuser who confirmed a code from their authenticator app this session may do this."
)
NOT_FOR_YOURSELF = gettext_lazy(
    "Another administrator issues your enrolment code: a code you issued to yourself "
    "would let a password alone enrol a device."
)
NOT_STAFF = gettext_lazy("Enrolment codes are for active staff accounts.")
NOT_YOUR_DEVICE = gettext_lazy(
    "Only a superuser who confirmed a code from their authenticator app this session may "
    "remove another account's second-factor device; your own, only once you have confirmed "
    "a code from it this session."
)


def verified_superuser(user):
    """Whether `user` is a superuser whose session confirmed a TOTP code."""
    verified = getattr(user, "is_verified", None)
    return bool(user and user.is_active and user.is_superuser and verified and verified())


def _require_verified_superuser(actor):
    if not verified_superuser(actor):
        raise PermissionRefused(NOT_AN_ADMINISTRATOR)


def _digest(code):
    normal = "".join(code.split()).replace("-", "").upper()
    return hashlib.sha256(normal.encode()).hexdigest()


def _new_code():
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return "-".join(raw[i : i + 4] for i in range(0, CODE_LENGTH, 4))


# --- Notices ---------------------------------------------------------------------------


def _recipients(user):
    """The account and every other active administrator with an e-mail address."""
    others = (
        get_user_model()
        .objects.filter(is_superuser=True, is_active=True)
        .exclude(pk=user.pk)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    return sorted({*([user.email] if user.email else []), *others})


def _notify(user, write):
    subject, body = _bilingual(write)
    for address in _recipients(user):
        outbox_queue(to=address, subject=subject, body=body)


def _by(actor):
    return actor.get_username() if actor is not None else _("the server (manage.py)")


def notify_code_issued(code, actor):
    def write():
        names = {
            "account": code.user.get_username(),
            "by": _by(actor),
            "until": code.expires_at.strftime("%Y-%m-%d %H:%M UTC"),
        }
        return (
            _("MICA portal: a second-factor enrolment code for %(account)s") % names,
            _(
                "A one-time code to enrol an authenticator app for the account %(account)s "
                "was issued by %(by)s. It is valid until %(until)s. If nobody expected it, "
                "delete it in the admin under Second-factor enrolment codes."
            )
            % names,
        )

    _notify(code.user, write)


def notify_enrolled(device):
    def write():
        names = {"account": device.user.get_username()}
        return (
            _("MICA portal: an authenticator app was enrolled for %(account)s") % names,
            _(
                "An authenticator app was enrolled as the second factor of the account "
                "%(account)s. If this was not expected, delete the device in the admin "
                "under Second factor and change the account's password."
            )
            % names,
        )

    _notify(device.user, write)


def notify_removed(device, actor):
    def write():
        names = {"account": device.user.get_username(), "by": _by(actor)}
        return (
            _("MICA portal: a second-factor device of %(account)s was removed") % names,
            _(
                "The authenticator app enrolled for the account %(account)s was removed by "
                "%(by)s. The account needs a new enrolment code from another administrator "
                "before it can open the admin again."
            )
            % names,
        )

    _notify(device.user, write)


def notify_token_issued(token, actor):
    """A token lets whoever holds its key act as the account through the API: the account
    and the other administrators learn of each one, and who issued it."""

    def write():
        names = {
            "account": token.user.get_username(),
            "by": _by(actor),
            "prefix": token.prefix,
            "until": (
                token.expiry.strftime("%Y-%m-%d %H:%M UTC") if token.expiry else _("it is deleted")
            ),
        }
        return (
            _("MICA portal: an API token for %(account)s was issued") % names,
            _(
                "An API token for the account %(account)s was issued by %(by)s. Its key "
                "begins with %(prefix)s and it is valid until %(until)s. Whoever holds the "
                "key acts as %(account)s through the API. If nobody expected it, delete "
                "the token in the admin under API tokens."
            )
            % names,
        )

    _notify(token.user, write)


# --- Enrolment codes -------------------------------------------------------------------


def enrolment_code_issue(*, user, actor):
    """A fresh code for `user` (shown once, only its digest kept): by `actor`, a verified
    superuser other than `user`, or by the server when `actor` is None. Returns
    (EnrolmentCode, code)."""
    if actor is not None:
        _require_verified_superuser(actor)
        if actor.pk == user.pk:
            raise PermissionRefused(NOT_FOR_YOURSELF)
    if not (user.is_active and user.is_staff):
        raise PermissionRefused(NOT_STAFF)
    code = _new_code()
    now = timezone.now()
    with transaction.atomic():
        record = EnrolmentCode.objects.create(
            user=user,
            digest=_digest(code),
            issued_by=actor,
            issued_at=now,
            expires_at=now + datetime.timedelta(minutes=settings.SECOND_FACTOR_ENROLMENT_MINUTES),
        )
        notify_code_issued(record, actor)
    return record, code


def _usable_codes(user):
    return EnrolmentCode.objects.filter(user=user, used_at=None, expires_at__gt=timezone.now())


def enrolment_code_check(*, user, code):
    """The unused, unexpired code of `user` that `code` is, or None."""
    return _usable_codes(user).filter(digest=_digest(code)).first()


def enrolment_code_check_id(*, user, code_id):
    """The unused, unexpired code of `user` with this id, or None."""
    if not isinstance(code_id, int):
        return None
    return _usable_codes(user).filter(pk=code_id).first()


def enrolment_device_start(*, user):
    """A fresh unconfirmed device for `user`: any earlier one goes, so a secret shown
    before is worth nothing."""
    TOTPDevice.objects.filter(user=user, confirmed=False).delete()
    return TOTPDevice.objects.create(user=user, name="authenticator app", confirmed=False)


def enrolment_complete(*, user, code_id, device_id, token):
    """Confirm the device with its first `token` and spend the code, at once. Returns the
    device, or None when the code is spent or expired; raises CodeRefused when the token
    is refused (its count of wrong codes committed all the same)."""
    with transaction.atomic():
        code = _usable_codes(user).select_for_update().filter(pk=code_id).first()
        device = (
            TOTPDevice.objects.select_for_update()
            .filter(pk=device_id, user=user, confirmed=False)
            .first()
        )
        if code is None or device is None:
            return None
        refusal = totp_refusal(device, token)
        if refusal is None:
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            code.used_at = timezone.now()
            code.save(update_fields=["used_at"])
            notify_enrolled(device)
    if refusal is not None:
        raise refusal
    return device


def sign_in_verify(*, device_id, token):
    """Check `token` against the account's confirmed device, its row held so that two
    sign-ins cannot both spend one code. Returns the device, or raises CodeRefused."""
    with transaction.atomic():
        device = TOTPDevice.objects.select_for_update().get(pk=device_id)
        refusal = totp_refusal(device, token)
    if refusal is not None:
        raise refusal
    return device


def device_removal_allowed(actor, device):
    """Whether `actor` may delete `device`: a device of another account only by a verified
    superuser (a password, or a delete permission, alone would let anyone shut a superuser
    out of the admin), one's own only in a session that confirmed a code."""
    if actor is None or not actor.is_active:
        return False
    if device.user_id == actor.pk:
        verified = getattr(actor, "is_verified", None)
        return bool(verified and verified())
    return verified_superuser(actor)


def device_remove(*, device, actor):
    """Delete a second-factor device and tell the account and the other administrators."""
    if not device_removal_allowed(actor, device):
        raise PermissionRefused(NOT_YOUR_DEVICE)
    with transaction.atomic():
        if device.confirmed:
            notify_removed(device, actor)
        device.delete()


# --- Why a code was refused --------------------------------------------------------------

WRONG_CODE = gettext_lazy(
    "That code is not right. Enter the code your authenticator app shows now."
)
TOO_MANY_CODES = gettext_lazy(
    "Too many wrong codes in a row: wait a minute, then enter the current code."
)
CODE_ALREADY_USED = gettext_lazy(
    "That code was already used to sign in: each code opens one session. Wait for your "
    "authenticator app to show the next one (within 30 seconds), then enter it."
)


class CodeRefused(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.message = message
        self.code = code


def _already_used(device, token):
    """Whether `token` is the code of a time step this device has already signed in with
    (django-otp refuses it: one code, one session)."""
    if not str(token).isdigit():
        return False
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    return totp.verify(int(token), device.tolerance) and totp.t() <= device.last_t


def totp_refusal(device, token):
    """None when `device` accepts `token` (its step then spent), else the CodeRefused
    that says why: throttled, already used in this time step, or wrong."""
    allowed, _why = device.verify_is_allowed()
    if not allowed:
        return CodeRefused(TOO_MANY_CODES, "throttled")
    if device.verify_token(token):
        return None
    if _already_used(device, token):
        return CodeRefused(CODE_ALREADY_USED, "already-used")
    return CodeRefused(WRONG_CODE, "wrong")


# --- API tokens --------------------------------------------------------------------------


def api_token_issue(*, user, actor, expiry=None):
    """A new API token for `user`, issued by `actor`, a verified superuser: so a token
    of an account that needs a second factor exists only through a verified session.
    Returns (ApiToken, key); the key is never stored and never shown again."""
    _require_verified_superuser(actor)
    digest, key = get_digest_token()
    token = ApiToken(
        digest=digest, token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user=user, expiry=expiry
    )
    with transaction.atomic():
        token.save(force_insert=True)
        ApiTokenIssue.objects.create(
            token=token,
            account=user,
            prefix=token.prefix,
            issued_by=actor,
            issued_at=token.created,
        )
        notify_token_issued(token, actor)
    return token, key
