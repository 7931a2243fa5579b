from django.core.management.base import BaseCommand, CommandError

from mica.content import content_load, content_sections
from mica.errors import DomainError


class Command(BaseCommand):
    help = "Load the canonical content (YAML under each app's content/) idempotently."

    def add_arguments(self, parser):
        parser.add_argument(
            "sections", nargs="*", help=f"Only these sections ({', '.join(content_sections())})."
        )

    def handle(self, *args, sections, **options):
        def progress(percent, message):
            self.stdout.write(f"[{percent:3d}%] {message}")

        try:
            content_load(sections=sections or None, progress=progress)
        except DomainError as exc:
            raise CommandError(str(exc.message)) from exc
        self.stdout.write(self.style.SUCCESS("Canonical content loaded."))
