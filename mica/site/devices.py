"""Second-factor devices in the admin: listed, read, and deleted only by whom the rule in
mica.site.enrolment allows (a verified superuser, or the owner in a verified session),
each deletion e-mailed to the account and the other administrators.

django-otp's own admin lets any staff account holding `otp_totp.delete_totpdevice`
delete any device with its password alone, a superuser's too, which shuts its owner
out of the admin. mica.site.admin registers this admin in its place.
"""

from django import forms
from django.core.exceptions import PermissionDenied
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_totp.admin import TOTPDeviceAdmin
from django_otp.plugins.otp_totp.models import TOTPDevice

from mica.errors import PermissionRefused
from mica.site.enrolment import device_removal_allowed, device_remove, verified_superuser


class SecondFactorDeviceForm(forms.ModelForm):
    class Meta:
        model = TOTPDevice
        fields = []
        # Shown beside the fields of the read-only page; django-otp's are English only.
        help_texts = {
            "user": _("The account that signs in with this device."),
            "confirmed": _("Whether its owner confirmed a code from it at enrolment."),
            "created_at": _("When its owner enrolled it."),
            "last_used_at": _("When a code from it was last accepted."),
            "throttling_failure_timestamp": _(
                "When a wrong code was last typed; empty once a right one follows."
            ),
            "throttling_failure_count": _(
                "Wrong codes since the last right one; each makes the next try wait longer."
            ),
        }


class SecondFactorDeviceAdmin(TOTPDeviceAdmin):
    """django-otp's devices, without adding or changing one here: a device is enrolled
    only by its owner with an enrolment code. Deleting another account's device takes a
    verified superuser, and tells the account and the other administrators. Its secret
    and clock settings stay out of sight: nobody acts on them here."""

    form = SecondFactorDeviceForm
    list_display = ["user", "created_at", "last_used_at", "confirmed"]
    list_filter = ["confirmed", "created_at", "last_used_at"]
    search_fields = ["user__username", "user__email"]
    search_help_text = _("Search by the account's username or e-mail address.")
    fieldsets = [
        (None, {"fields": ["user", "confirmed"]}),
        (
            _("Use of the device"),
            {
                "fields": [
                    "created_at",
                    "last_used_at",
                    "throttling_failure_count",
                    "throttling_failure_timestamp",
                ]
            },
        ),
    ]

    def get_list_display(self, request):
        return self.list_display

    def get_fieldsets(self, request, obj=None):
        return self.fieldsets

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Django's permission is not enough: the device's owner and the session decide.
        # Per device in the delete page and in the bulk action (Django asks for each one
        # it would delete); without a device, whether the delete action is offered.
        if obj is not None:
            return device_removal_allowed(request.user, obj)
        verified = getattr(request.user, "is_verified", None)
        return verified_superuser(request.user) or bool(
            verified and verified() and super().has_delete_permission(request)
        )

    def delete_model(self, request, obj):
        try:
            device_remove(device=obj, actor=request.user)
        except PermissionRefused as refused:
            raise PermissionDenied(refused.message) from refused

    def delete_queryset(self, request, queryset):
        for device in queryset.select_related("user"):
            self.delete_model(request, device)
