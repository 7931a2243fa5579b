"""Staff sign-in: lockout after repeated wrong passwords, and a second factor in the admin.

django-axes counts failed password sign-ins (the admin login and HTTP Basic auth on the
API) per username and client address (mica.site.clients) and refuses that pair, even with
the right password, for AXES_COOLOFF_TIME after MICA_LOGIN_FAILURE_LIMIT failures, or
until an administrator unlocks it in the admin. Accounts that can see holdout tasks or
publish an edition must also confirm a TOTP code (django-otp) before the admin opens.
"""

from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy as _
from django_otp import user_has_device
from drf_spectacular.authentication import BasicScheme, SessionScheme
from rest_framework import exceptions
from rest_framework.authentication import BasicAuthentication, SessionAuthentication
from rest_framework.permissions import SAFE_METHODS

from catalogue.access import HOLDOUT_PERMISSION
from governance.models import PersonDeclaration

BASIC_REFUSED = _(
    "This account needs a second factor, so the API does not take its password: send "
    "the header Authorization: Token <key> with a token issued to it in the admin."
)
UNVERIFIED_SESSION = _(
    "This account needs a second factor: confirm a code from your authenticator app in "
    "the admin before writing through the API in this session, or use a token."
)
LOCKED_OUT = _(
    "Too many failed sign-ins for this account from your address. It stays locked for "
    "%(minutes)s minutes after the last attempt, or until an administrator unlocks it."
)


def second_factor_required(user):
    """Whether `user` must confirm a TOTP code before the admin opens: superusers (only
    they publish an edition), holders of the holdout permission, and anyone whose
    declaration says they have holdout access."""
    if not (user and user.is_authenticated and user.is_active):
        return False
    if user.is_superuser or user.has_perm(HOLDOUT_PERMISSION):
        return True
    return PersonDeclaration.objects.filter(user=user, holdout_access=True).exists()


def lockout_username(request, credentials=None):
    """AXES_USERNAME_CALLABLE: the username as typed, fit for axes' column (255
    characters, no NUL), so that no input a client sends turns a failure into a 500."""
    from axes.conf import settings

    field = settings.AXES_USERNAME_FORM_FIELD
    if credentials:
        username = credentials.get(field)
    else:
        data = getattr(request, "data", None) or request.POST
        username = data.get(field) if hasattr(data, "get") else None
    if username is None:
        return None
    return str(username).replace("\x00", "")[:255]


def _cool_off_minutes():
    from axes.helpers import get_cool_off

    cool_off = get_cool_off()
    return max(1, round(cool_off.total_seconds() / 60)) if cool_off else 0


def lockout_message():
    return LOCKED_OUT % {"minutes": _cool_off_minutes()}


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: the page a locked-out sign-in gets, in the request's language
    (429); JSON under /api/."""
    from axes.conf import settings

    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.path_info.startswith("/api/"):
        from django.http import JsonResponse

        return JsonResponse({"detail": lockout_message(), "code": "locked-out"}, status=status)
    return render(
        request,
        "admin/lockout.html",
        {
            "title": _("Sign-in locked"),
            "message": lockout_message(),
            "site_header": _("MICA portal administration"),
            "site_title": _("MICA portal"),
            "has_permission": False,
            "is_nav_sidebar_enabled": False,
        },
        status=status,
    )


class SignInLockedOut(exceptions.Throttled):
    default_code = "locked-out"


class LockoutBasicAuthentication(BasicAuthentication):
    """HTTP Basic auth whose lockout answers 429 with the reason, not a bare 401 that
    would read as a wrong password."""

    def authenticate_credentials(self, userid, password, request=None):
        if "\x00" in userid or "\x00" in password or len(userid) > 255:
            # No account has such a name, and the database would refuse to look it up.
            raise exceptions.AuthenticationFailed(_("Invalid username/password."))
        try:
            user, auth = super().authenticate_credentials(userid, password, request)
        except exceptions.AuthenticationFailed:
            if getattr(request, "axes_locked_out", False):
                raise SignInLockedOut(
                    wait=_cool_off_minutes() * 60, detail=lockout_message()
                ) from None
            raise
        # A password alone never opens what the second factor guards: such an account
        # uses a token, which only a verified session issues.
        if second_factor_required(user):
            raise exceptions.PermissionDenied(BASIC_REFUSED)
        return user, auth


class SecondFactorSessionAuthentication(SessionAuthentication):
    """The admin's session on the API (CSRF-checked, as DRF's): an account that needs a
    second factor writes only once this session has confirmed a code. Reads stay open,
    as they are to anyone."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None or request.method in SAFE_METHODS:
            return result
        user = result[0]
        verified = getattr(user, "is_verified", None)
        if second_factor_required(user) and not (verified and verified()):
            raise exceptions.PermissionDenied(UNVERIFIED_SESSION)
        return result


class LockoutBasicScheme(BasicScheme):
    """The OpenAPI schema describes it as the HTTP Basic auth it is."""

    target_class = LockoutBasicAuthentication


class SecondFactorSessionScheme(SessionScheme):
    """The OpenAPI schema describes it as the session cookie it is."""

    target_class = SecondFactorSessionAuthentication


SECOND_FACTOR_EXEMPT = {"login", "logout"}


class AdminSecondFactorMiddleware:
    """The admin opens for an account that needs a second factor only once this session
    has confirmed a TOTP code; until then every admin page leads to that step (or to
    enrolling a device, for an account that has none). Nothing else on the site asks."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        match = request.resolver_match
        if match is None or match.app_name != "admin" or match.url_name in SECOND_FACTOR_EXEMPT:
            return None
        user = request.user
        if not (user.is_authenticated and user.is_staff) or user.is_verified():
            return None
        if not second_factor_required(user):
            return None
        step = "second-factor" if user_has_device(user) else "second-factor-enrol"
        return redirect(f"{reverse(step)}?{urlencode({'next': request.get_full_path()})}")
