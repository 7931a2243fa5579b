"""The admin's second step: confirm a TOTP code, or enrol a device for one first."""

from base64 import b32encode

import django_otp
from django import forms
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django_otp.plugins.otp_totp.models import TOTPDevice

from mica.site.staff import second_factor_required

WRONG_CODE = _("That code is not right. Enter the code your authenticator app shows now.")
TOO_MANY_CODES = _("Too many wrong codes in a row: wait a minute, then enter the current code.")


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

    def __init__(self, *args, device, **kwargs):
        super().__init__(*args, **kwargs)
        self.device = device

    def clean_code(self):
        code = self.cleaned_data["code"].strip()
        allowed, _why = self.device.verify_is_allowed()
        if not allowed:
            raise forms.ValidationError(TOO_MANY_CODES, code="throttled")
        if not self.device.verify_token(code):
            raise forms.ValidationError(WRONG_CODE, code="wrong")
        return code


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
    return never_cache(staff_member_required(sensitive_post_parameters("code")(wrapped)))


@_step
def second_factor(request):
    """Confirm this session with a code from the account's TOTP device."""
    device = TOTPDevice.objects.devices_for_user(request.user, confirmed=True).first()
    if device is None:
        return redirect(f"{reverse('second-factor-enrol')}?{request.GET.urlencode()}")
    form = CodeForm(request.POST if request.method == "POST" else None, device=device)
    if form.is_valid():
        django_otp.login(request, device)
        return redirect(_next_url(request))
    return TemplateResponse(
        request,
        "admin/second_factor.html",
        _context(request, title=_("Second factor"), form=form),
    )


@_step
def second_factor_enrol(request):
    """Enrol a TOTP device: the account's secret, then one code to prove the app has it."""
    user = request.user
    if TOTPDevice.objects.devices_for_user(user, confirmed=True).exists():
        return redirect(f"{reverse('second-factor')}?{request.GET.urlencode()}")
    device = TOTPDevice.objects.devices_for_user(user, confirmed=False).first()
    if device is None:
        device = TOTPDevice.objects.create(user=user, name="authenticator app", confirmed=False)
    form = CodeForm(request.POST if request.method == "POST" else None, device=device)
    if form.is_valid():
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        django_otp.login(request, device)
        return redirect(_next_url(request))
    return TemplateResponse(
        request,
        "admin/second_factor_enrol.html",
        _context(
            request,
            title=_("Set up a second factor"),
            form=form,
            otpauth_uri=device.config_url,
            secret=b32encode(device.bin_key).decode(),
        ),
    )
