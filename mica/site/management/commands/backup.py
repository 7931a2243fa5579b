from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError
from mica.site.backup import backup_write


class Command(BaseCommand):
    help = (
        "Write a backup: a consistent copy of the database and the published export set, "
        "with a manifest of checksums, in one directory named with the UTC time."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--output",
            metavar="DIR",
            help=(
                "Write the backup directory under DIR (default: VAR_DIR/backups, or the "
                "object store's backups/ with MICA_S3_BUCKET set)."
            ),
        )

    def progress(self, percent, message=""):
        self.stdout.write(f"[{percent:3d}%] {message}")

    def handle(self, *args, output=None, **options):
        try:
            path, manifest = backup_write(destination=output, progress=self.progress)
        except DomainError as refused:
            raise CommandError(refused.message) from refused
        for entry in manifest["files"]:
            self.stdout.write(f"{entry['sha256']}  {entry['size']:>10}  {entry['name']}")
        self.stdout.write(self.style.SUCCESS(f"Backup written to {path}"))
