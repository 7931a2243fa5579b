"""The admin's second step: confirm a TOTP code, or enrol a device for one first (with a
one-time enrolment code from another administrator)."""

from base64 import b32encode

import django_otp
import qrcode
from django import forms
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django_otp.plugins.otp_totp.models import TOTPDevice
from qrcode.image.svg import SvgPathFillImage

from mica.site.enrolment import (
    CodeRefused,
    enrolment_code_check,
    enrolment_code_check_id,
    enrolment_complete,
    enrolment_device_start,
    sign_in_verify,
)
from mica.site.staff import second_factor_required

ENROLMENT_CODE_REFUSED = _(
    "That enrolment code is not valid for this account: it may be mistyped, used already "
    "or expired. Ask another administrator for a new one."
)
ENROLMENT_EXPIRED = _(
    "Your enrolment code expired or was used before the device was confirmed. Ask "
    "another administrator for a new one."
)
# Where the enrolment under way keeps its accepted code and its fresh device.
ENROLMENT_SESSION_KEY = "second_factor_enrolment"


class CodeForm(forms.Form):
    code = forms.RegexField(
        label=_("Six-digit code"),
        regex=r"^\s*\d{6}\s*$",
        max_length=20,
        error_messages={"invalid": _("Enter the six digits your authenticator app shows.")},
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True}
        ),
    )

    def clean_code(self):
        return self.cleaned_data["code"].strip()


class EnrolmentCodeForm(forms.Form):
    enrolment_code = forms.CharField(
        label=_("Enrolment code"),
        max_length=40,
        help_text=_("Sixteen letters and digits, as the administrator gave them to you."),
        widget=forms.TextInput(attrs={"autocomplete": "off", "autofocus": True}),
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.record = None

    def clean_enrolment_code(self):
        self.record = enrolment_code_check(user=self.user, code=self.cleaned_data["enrolment_code"])
        if self.record is None:
            raise forms.ValidationError(ENROLMENT_CODE_REFUSED, code="refused")
        return self.cleaned_data["enrolment_code"]


def _next_url(request):
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("admin:index")


def _context(request, **extra):
    return {
        "site_header": admin.site.site_header,
        "site_title": admin.site.site_title,
        "site_url": admin.site.site_url,
        "has_permission": False,
        "is_nav_sidebar_enabled": False,
        "next": _next_url(request),
        **extra,
    }


def _step(view):
    """Only for signed-in staff who need the step and have not taken it this session."""

    def wrapped(request):
        user = request.user
        if user.is_verified() or not second_factor_required(user):
            return redirect(_next_url(request))
        return view(request)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return never_cache(
        staff_member_required(sensitive_post_parameters("code", "enrolment_code")(wrapped))
    )


@_step
def second_factor(request):
    """Confirm this session with a code from the account's TOTP device."""
    device = TOTPDevice.objects.devices_for_user(request.user, confirmed=True).first()
    if device is None:
        return redirect(f"{reverse('second-factor-enrol')}?{request.GET.urlencode()}")
    form = CodeForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            device = sign_in_verify(device_id=device.pk, token=form.cleaned_data["code"])
        except CodeRefused as refused:
            form.add_error("code", forms.ValidationError(refused.message, code=refused.code))
        else:
            django_otp.login(request, device)
            return redirect(_next_url(request))
    return TemplateResponse(
        request,
        "admin/second_factor.html",
        _context(request, title=_("Second factor"), form=form),
    )


def qr_code_svg(uri):
    """The otpauth:// address as an inline SVG QR code: paths and presentation
    attributes only, on its own white ground, so it passes the CSP and any theme."""
    image = qrcode.make(uri, image_factory=SvgPathFillImage, border=4)
    svg = image.to_string(encoding="unicode")
    label = escape(_("QR code of the address above, for your authenticator app to scan"))
    return mark_safe(svg.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1))


def _enrolment_under_way(request):
    """(code id, device) of the enrolment this session started, while its code still
    holds; else None."""
    held = request.session.get(ENROLMENT_SESSION_KEY) or {}
    code = enrolment_code_check_id(user=request.user, code_id=held.get("code"))
    device = TOTPDevice.objects.filter(
        pk=held.get("device"), user=request.user, confirmed=False
    ).first()
    if code is None or device is None:
        return None
    return code.pk, device


@_step
def second_factor_enrol(request):
    """Enrol a TOTP device: first the one-time code another administrator issued, then
    the account's secret (QR code and text), then one code to prove the app has it."""
    user = request.user
    if TOTPDevice.objects.devices_for_user(user, confirmed=True).exists():
        return redirect(f"{reverse('second-factor')}?{request.GET.urlencode()}")
    under_way = _enrolment_under_way(request)
    if under_way is None:
        # An enrolment this session began whose code ran out meanwhile: say so.
        lapsed = request.session.pop(ENROLMENT_SESSION_KEY, None) is not None
        return _enrolment_code_step(request, expired=lapsed)
    code_id, device = under_way
    form = CodeForm(request.POST if "code" in request.POST else None)
    if form.is_valid():
        try:
            confirmed = enrolment_complete(
                user=user, code_id=code_id, device_id=device.pk, token=form.cleaned_data["code"]
            )
        except CodeRefused as refused:
            form.add_error("code", forms.ValidationError(refused.message, code=refused.code))
        else:
            request.session.pop(ENROLMENT_SESSION_KEY, None)
            if confirmed is None:
                return _enrolment_code_step(request, expired=True)
            django_otp.login(request, confirmed)
            return redirect(_next_url(request))
    return TemplateResponse(
        request,
        "admin/second_factor_enrol.html",
        _context(
            request,
            title=_("Set up a second factor"),
            form=form,
            otpauth_uri=device.config_url,
            qr_code=qr_code_svg(device.config_url),
            secret=b32encode(device.bin_key).decode(),
        ),
    )


def _enrolment_code_step(request, expired=False):
    """Ask for the enrolment code; once it is right, start a fresh device and show it."""
    posted = request.method == "POST" and "enrolment_code" in request.POST
    form = EnrolmentCodeForm(request.POST if posted else None, user=request.user)
    if form.is_valid():
        device = enrolment_device_start(user=request.user)
        request.session[ENROLMENT_SESSION_KEY] = {"code": form.record.pk, "device": device.pk}
        return redirect(request.get_full_path())
    return TemplateResponse(
        request,
        "admin/second_factor_enrolment_code.html",
        _context(
            request,
            title=_("Set up a second factor"),
            form=form,
            expired=expired,
            expired_message=ENROLMENT_EXPIRED,
            minutes=settings.SECOND_FACTOR_ENROLMENT_MINUTES,
        ),
    )
