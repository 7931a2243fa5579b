"""Sign-in lockouts in the admin: who is locked out from where, and the button that
unlocks them (django-axes' records, with AXES_ENABLE_ADMIN off so these replace its own)."""

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, ngettext

# Labels axes and django-otp show in the admin; neither ships a Korean catalogue, so they
# are named here for `make messages` to put into ours.
THIRD_PARTY_LABELS = (
    gettext_noop("access attempt"),
    gettext_noop("access attempts"),
    gettext_noop("access failure"),
    gettext_noop("access failures"),
    gettext_noop("access log"),
    gettext_noop("access logs"),
    gettext_noop("Access lock out"),
    gettext_noop("User Agent"),
    gettext_noop("IP Address"),
    gettext_noop("Path"),
    gettext_noop("Failed Logins"),
    gettext_noop("Attempt Time"),
    gettext_noop("Logout Time"),
)


class LockedOutFilter(admin.SimpleListFilter):
    title = _("locked out")
    parameter_name = "locked"

    def lookups(self, request, model_admin):
        return (("yes", _("Yes")), ("no", _("No")))

    def queryset(self, request, queryset):
        limit = settings.AXES_FAILURE_LIMIT
        if self.value() == "yes":
            return queryset.filter(failures_since_start__gte=limit)
        if self.value() == "no":
            return queryset.filter(failures_since_start__lt=limit)
        return queryset


class ReadOnlyRecordAdmin(admin.ModelAdmin):
    date_hierarchy = "attempt_time"
    search_fields = ["username", "ip_address"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description=_("username"), ordering="username")
    def account(self, obj):
        return obj.username

    @admin.display(description=_("client address"), ordering="ip_address")
    def client(self, obj):
        return obj.ip_address

    @admin.display(description=_("when"), ordering="attempt_time")
    def when(self, obj):
        return obj.attempt_time

    @admin.display(description=_("path"))
    def path(self, obj):
        return obj.path_info


@admin.register(AccessAttempt)
class AccessAttemptAdmin(ReadOnlyRecordAdmin):
    """Failed sign-ins counted per username and client address; deleting one (or the
    unlock action) lets that pair sign in again at once."""

    list_display = ["account", "client", "failures", "when", "locked_out"]
    list_filter = [LockedOutFilter]
    fields = ["username", "ip_address", "user_agent", "path_info", "failures_since_start"]
    actions = ["unlock"]

    @admin.display(description=_("failed sign-ins"), ordering="failures_since_start")
    def failures(self, obj):
        return obj.failures_since_start

    @admin.display(description=_("locked out"), boolean=True)
    def locked_out(self, obj):
        return obj.failures_since_start >= settings.AXES_FAILURE_LIMIT

    @admin.action(description=_("Unlock the selected sign-ins"), permissions=["delete"])
    def unlock(self, request, queryset):
        attempts = list(queryset)
        count = len(attempts)
        # Who unlocked whom stays in the admin's log, as a deletion does.
        self.log_deletions(request, attempts)
        for attempt in attempts:
            # One by one, so axes' delete signal clears any cached count too.
            attempt.delete()
        self.message_user(
            request,
            ngettext(
                "%(count)d sign-in unlocked: it may try again at once.",
                "%(count)d sign-ins unlocked: they may try again at once.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )


@admin.register(AccessFailureLog)
class AccessFailureLogAdmin(ReadOnlyRecordAdmin):
    """Every failed sign-in, kept after an unlock (read only)."""

    list_display = ["account", "client", "when", "path", "was_locked_out"]
    list_filter = ["locked_out"]
    fields = ["username", "ip_address", "user_agent", "path_info", "attempt_time", "locked_out"]

    @admin.display(description=_("locked out"), boolean=True, ordering="locked_out")
    def was_locked_out(self, obj):
        return obj.locked_out

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AccessLog)
class AccessLogAdmin(ReadOnlyRecordAdmin):
    """Every successful sign-in, and when it signed out (read only)."""

    list_display = ["account", "client", "when", "signed_out", "path"]
    fields = ["username", "ip_address", "user_agent", "path_info", "attempt_time", "logout_time"]

    @admin.display(description=_("signed out"), ordering="logout_time")
    def signed_out(self, obj):
        return obj.logout_time

    def has_delete_permission(self, request, obj=None):
        return False
