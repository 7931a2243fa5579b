"""Sign-in lockouts in the admin: who is locked out from where, and the button that
unlocks them (django-axes' records, with AXES_ENABLE_ADMIN off so these replace its own);
API tokens, enrolment codes and second-factor devices, for verified superusers; staff
accounts and groups, their permissions and the shipped roles (mica.site.roles) named in
the reader's language."""

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminPasswordChangeForm
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html, format_html_join
from django.utils.text import capfirst, format_lazy
from django.utils.translation import get_language, gettext_noop, ngettext
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_totp.models import TOTPDevice
from knox.models import AuthToken

from mica.admin_names import (
    api_token_digests_named,
    boolean_icons_named,
    permission_label,
    staff_groups_named,
)
from mica.errors import PermissionRefused
from mica.site.devices import SecondFactorDeviceAdmin
from mica.site.enrolment import (
    NOT_FOR_YOURSELF,
    api_token_issue,
    enrolment_code_issue,
    verified_superuser,
)
from mica.site.models import ApiToken, EnrolmentCode
from mica.site.roles import ROLES_BY_NAME, STAFF_ROLES, role_label

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


EMPTY = "—"


def as_code(value):
    return format_html('<span translate="no">{}</span>', value) if value else EMPTY


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

    # A value axes did not record is a dash, as in the lists, never Python's "None".
    @admin.display(description=_("username"), ordering="username")
    def account(self, obj):
        return obj.username or EMPTY

    @admin.display(description=_("client address"), ordering="ip_address")
    def client(self, obj):
        return obj.ip_address or EMPTY

    @admin.display(description=_("when"), ordering="attempt_time")
    def when(self, obj):
        return obj.attempt_time or EMPTY

    @admin.display(description=_("path"))
    def path(self, obj):
        # An address on this site, or what axes records when it had none ("<unknown>").
        return as_code(obj.path_info)

    @admin.display(description=_("browser"))
    def browser(self, obj):
        # What the client says it is, as it said it: not words to translate.
        return as_code(obj.user_agent)


@admin.register(AccessAttempt)
class AccessAttemptAdmin(ReadOnlyRecordAdmin):
    """Failed sign-ins counted per username and client address; deleting one (or the
    unlock action) lets that pair sign in again at once."""

    list_display = ["account", "client", "failures", "when", "locked_out"]
    list_filter = [LockedOutFilter]
    fields = ["account", "client", "browser", "path", "failures"]
    readonly_fields = fields
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
    fields = ["account", "client", "browser", "path", "when", "was_locked_out"]
    readonly_fields = fields

    @admin.display(description=_("locked out"), boolean=True, ordering="locked_out")
    def was_locked_out(self, obj):
        return obj.locked_out

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(AccessLog)
class AccessLogAdmin(ReadOnlyRecordAdmin):
    """Every successful sign-in, and when it signed out (read only)."""

    list_display = ["account", "client", "when", "signed_out", "path"]
    fields = ["account", "client", "browser", "path", "when", "signed_out"]
    readonly_fields = fields

    @admin.display(description=_("signed out"), ordering="logout_time")
    def signed_out(self, obj):
        return obj.logout_time or EMPTY

    def has_delete_permission(self, request, obj=None):
        return False


# --- API tokens, enrolment codes and second-factor devices ----------------------------------


class VerifiedSuperuserOnly:
    """Only a superuser whose session confirmed a TOTP code sees or manages these: a
    staff account with `view_*` permissions finds nothing here."""

    def has_module_permission(self, request):
        return verified_superuser(request.user)

    def has_view_permission(self, request, obj=None):
        return verified_superuser(request.user)

    def has_add_permission(self, request):
        return verified_superuser(request.user)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return verified_superuser(request.user)


def shown_once(request, *, title, lead, secret, note, back):
    """The one page that shows a secret the database does not keep."""
    response = TemplateResponse(
        request,
        "admin/shown_once.html",
        {
            **admin.site.each_context(request),
            "title": title,
            "lead": lead,
            "secret": secret,
            "note": note,
            "back": back,
        },
    )
    add_never_cache_headers(response)
    return response


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ["user", "expiry"]
        labels = {"user": capfirst(_("account")), "expiry": capfirst(_("expires"))}
        help_texts = {"expiry": _("Leave empty for a token that lasts until it is deleted.")}


@admin.register(ApiToken)
class ApiTokenAdmin(VerifiedSuperuserOnly, admin.ModelAdmin):
    """API tokens: issued here, shown once, listed by their first characters and by who
    issued them; deleting one revokes it."""

    form = ApiTokenForm
    list_display = ["prefix_shown", "user", "issued_by", "created", "expiry"]
    search_fields = ["user__username", "token_key", "issue__issued_by__username"]
    autocomplete_fields = ["user"]  # chosen by name, not by typing an id
    list_select_related = ["user", "issue__issued_by"]
    readonly_fields = ["prefix_shown", "user", "issued_by", "created", "expiry"]

    def get_fields(self, request, obj=None):
        return ["user", "expiry"] if obj is None else self.readonly_fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    @admin.display(description=_("key begins with"), ordering="token_key")
    def prefix_shown(self, obj):
        return obj.prefix

    @admin.display(description=_("issued by"), ordering="issue__issued_by__username")
    def issued_by(self, obj):
        # A token from before issuers were recorded (or DRF's, moved to a digest) has none.
        issue = getattr(obj, "issue", None)
        if issue is None:
            return _("not recorded")
        return issue.issued_by or EMPTY

    def save_model(self, request, obj, form, change):
        try:
            token, key = api_token_issue(
                user=obj.user, actor=request.user, expiry=form.cleaned_data.get("expiry")
            )
        except PermissionRefused as refused:
            raise PermissionDenied(refused.message) from refused
        obj.pk, obj.token_key, obj.created = token.pk, token.token_key, token.created
        obj.key_shown_once = key

    def response_add(self, request, obj, post_url_continue=None):
        return shown_once(
            request,
            title=_("API token issued"),
            lead=_("The key of the new API token for %(account)s:")
            % {"account": obj.user.get_username()},
            secret=obj.key_shown_once,
            note=_(
                "Copy it now and send it to its owner by a safe channel: it is shown "
                "this once. The portal keeps only a digest and its first characters, so "
                "nobody can read it back. Deleting the token revokes it."
            )
            + " "
            + _("The account and the other administrators have been told by e-mail who issued it."),
            back=reverse("admin:site_apitoken_changelist"),
        )


class EnrolmentCodeForm(forms.ModelForm):
    class Meta:
        model = EnrolmentCode
        fields = ["user"]

    def __init__(self, *args, actor=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.actor = actor
        self.fields["user"].queryset = User.objects.filter(is_staff=True, is_active=True)

    def clean_user(self):
        user = self.cleaned_data["user"]
        if self.actor is not None and user.pk == self.actor.pk:
            raise forms.ValidationError(NOT_FOR_YOURSELF)
        return user


@admin.register(EnrolmentCode)
class EnrolmentCodeAdmin(VerifiedSuperuserOnly, admin.ModelAdmin):
    """One-time codes that let an account enrol an authenticator app: issued here for
    another administrator, shown once, valid for SECOND_FACTOR_ENROLMENT_MINUTES."""

    list_display = ["user", "issued_by", "issued_at", "expires_at", "used_at"]
    list_select_related = ["user", "issued_by"]
    search_fields = ["user__username"]
    autocomplete_fields = ["user"]
    fields = ["user", "issued_by", "issued_at", "expires_at", "used_at"]

    def get_form(self, request, obj=None, **kwargs):
        base = super().get_form(request, obj, form=EnrolmentCodeForm, **kwargs)

        class WithActor(base):
            def __init__(self, *args, **inner):
                super().__init__(*args, actor=request.user, **inner)

        return WithActor

    def get_fields(self, request, obj=None):
        return ["user"] if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.fields

    def save_model(self, request, obj, form, change):
        try:
            record, code = enrolment_code_issue(user=obj.user, actor=request.user)
        except PermissionRefused as refused:
            raise PermissionDenied(refused.message) from refused
        obj.pk, obj.issued_at, obj.expires_at = record.pk, record.issued_at, record.expires_at
        obj.code_shown_once = code

    def response_add(self, request, obj, post_url_continue=None):
        return shown_once(
            request,
            title=_("Enrolment code issued"),
            lead=_("The one-time enrolment code for %(account)s:")
            % {"account": obj.user.get_username()},
            secret=obj.code_shown_once,
            note=_(
                "Give it to its owner yourself (in person or by telephone), not by the "
                "e-mail that carries their password reset. It is shown this once, is valid "
                "until %(until)s and enrols one device. The account and the other "
                "administrators have been told by e-mail."
            )
            % {"until": obj.expires_at.strftime("%Y-%m-%d %H:%M UTC")},
            back=reverse("admin:site_enrolmentcode_changelist"),
        )


admin.site.unregister(TOTPDevice)
# django-rest-knox's own admin lists digests and issues keys in a message; ours above
# replaces it.
if admin.site.is_registered(AuthToken):
    admin.site.unregister(AuthToken)
api_token_digests_named()


# Ours (mica.site.devices) in place of django-otp's: deleting another account's device
# takes a verified superuser, not a delete permission and a password.
admin.site.register(TOTPDevice, SecondFactorDeviceAdmin)


# --- Staff accounts and groups -------------------------------------------------------------


class PermissionChoiceField(forms.ModelMultipleChoiceField):
    """Permissions named in the reader's language (mica.admin_names), not by the English
    name Django stored for each when the database was migrated."""

    def label_from_instance(self, obj):
        return permission_label(obj)


class PermissionsNamedAdmin:
    permission_fields = ()

    def formfield_for_manytomany(self, db_field, request=None, **kwargs):
        if db_field.name in self.permission_fields:
            kwargs["form_class"] = PermissionChoiceField
        return super().formfield_for_manytomany(db_field, request, **kwargs)


# Django builds this help text at import time, half of it English whatever the language.
USABLE_PASSWORD_HELP = format_lazy(
    '{}<ul id="id_unusable_warning" class="messagelist"><li class="warning">{}</li></ul>',
    _(
        "Whether the user will be able to authenticate using a password or not. If "
        "disabled, they may still be able to authenticate using other backends, such "
        "as Single Sign-On or LDAP."
    ),
    _("If disabled, the current password for this user will be lost."),
)


class AccountPasswordForm(AdminPasswordChangeForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "usable_password" in self.fields:
            self.fields["usable_password"].help_text = USABLE_PASSWORD_HELP


admin.site.unregister(User)
admin.site.unregister(Group)
staff_groups_named()
boolean_icons_named()


def staff_roles_named():
    """A group reads as its role in the reader's language wherever the admin names it (the
    user form's choices, the user list's filter, a deletion's summary), and the rows that
    tie groups and accounts to permissions as what they grant: Django names those in
    English ("Group-permission relationship: Group_permissions object (1)")."""
    Group.__str__ = role_label
    for through, name in (
        (Group.permissions.through, _("permission of a group")),
        (User.user_permissions.through, _("permission of an account")),
    ):
        through._meta.verbose_name = through._meta.verbose_name_plural = name
        through.__str__ = lambda row: permission_label(row.permission)
    membership = User.groups.through
    membership._meta.verbose_name = membership._meta.verbose_name_plural = _("group of an account")
    membership.__str__ = lambda row: role_label(row.group)


staff_roles_named()


def roles_help():
    """The user form's help on groups, built per request so it reads in its language."""
    rows = format_html_join(
        "",
        "<li>{}{}: {} {}</li>",
        (
            (
                role.label,
                # The stored name too, where the label is another language's.
                format_html(' (<span translate="no">{}</span>)', role.name)
                if get_language() != "en"
                else "",
                role.duty,
                _("Needs a second factor.") if role.second_factor else _("No second factor."),
            )
            for role in STAFF_ROLES
        ),
    )
    return format_html(
        "{}<ul>{}</ul>",
        _(
            "The roles the portal ships, each a group with exactly the permissions it "
            "needs; authors and reviewers also need a market competence:"
        ),
        rows,
    )


@admin.register(User)
class StaffAccountAdmin(PermissionsNamedAdmin, UserAdmin):
    permission_fields = ("user_permissions",)
    change_password_form = AccountPasswordForm

    def formfield_for_manytomany(self, db_field, request=None, **kwargs):
        if db_field.name == "groups":
            kwargs["help_text"] = roles_help()
        return super().formfield_for_manytomany(db_field, request, **kwargs)


@admin.register(Group)
class StaffGroupAdmin(PermissionsNamedAdmin, GroupAdmin):
    permission_fields = ("permissions",)
    list_display = ("role", "stored_name", "needs_second_factor")

    @admin.display(description=_("role"), ordering="name")
    def role(self, obj):
        return role_label(obj)

    @admin.display(description=_("name"), ordering="name")
    def stored_name(self, obj):
        # Data, as an administrator typed it or the migration stored it: not to translate.
        return as_code(obj.name)

    @admin.display(description=_("second factor"), boolean=True)
    def needs_second_factor(self, obj):
        role = ROLES_BY_NAME.get(obj.name)
        return role.second_factor if role else None
