"""Issue a one-time second-factor enrolment code on the server: how the first
administrator enrols, since no other administrator can issue one yet."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from mica.errors import PermissionRefused
from mica.site.enrolment import enrolment_code_issue


class Command(BaseCommand):
    help = (
        "Print a one-time code with which USERNAME enrols an authenticator app in the admin "
        "(valid for MICA_ENROLMENT_CODE_MINUTES); the account and the other administrators "
        "are told by e-mail."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(_("No account is named %(username)s.") % {"username": username})
        try:
            record, code = enrolment_code_issue(user=user, actor=None)
        except PermissionRefused as refused:
            raise CommandError(str(refused.message)) from refused
        self.stdout.write(code)
        self.stderr.write(
            _("Valid until %(until)s, for one device of %(username)s.")
            % {"until": record.expires_at.strftime("%Y-%m-%d %H:%M UTC"), "username": username}
        )
