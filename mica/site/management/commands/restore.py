from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError
from mica.site.backup import backup_restore


class Command(BaseCommand):
    help = (
        "Restore a backup written by `backup`: the database and the published export set. "
        "Every check runs first; a refused restore changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "backup",
            help=(
                "The backup directory (mica-backup-<time>), or with MICA_S3_BUCKET set, "
                "the name of a backup in the object store."
            ),
        )
        parser.add_argument(
            "--no-input",
            "--noinput",
            action="store_false",
            dest="interactive",
            help="Do not ask for confirmation.",
        )

    def progress(self, percent, message=""):
        self.stdout.write(f"[{percent:3d}%] {message}")

    def confirm(self, manifest):
        try:
            answer = input(
                f"This replaces the {manifest['engine']} database and the published export set "
                f"with the backup of {manifest['created_at']}.\n"
                "Type 'yes' to continue, or anything else to cancel: "
            )
        except EOFError:  # no one to ask (cron, a closed stdin): not a yes
            return False
        return answer == "yes"

    def handle(self, *args, backup, interactive=True, **options):
        try:
            report = backup_restore(
                source=backup,
                progress=self.progress,
                confirm=self.confirm if interactive else (lambda manifest: True),
            )
        except DomainError as refused:
            raise CommandError(refused.message) from refused
        for table in report["dropped_tables"]:
            self.stdout.write(f"Dropped {table}: the backup predates it.")
        if report["pending_migrations"]:
            self.stdout.write(
                self.style.WARNING(
                    f"The backup predates {len(report['pending_migrations'])} migrations of "
                    "this release: run `manage.py migrate` before starting the site."
                )
            )
        self.stdout.write(
            self.style.SUCCESS(f"Restored the backup of {report['manifest']['created_at']}.")
        )
