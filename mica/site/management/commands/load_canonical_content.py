from django.core.management.base import BaseCommand, CommandError

from mica.content.loading import content_load, content_sections
from mica.errors import DomainError


class Command(BaseCommand):
    help = (
        "Load the canonical content (YAML under each app's content/): create what is "
        "missing, refresh what nobody edited, keep and report every edited record."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "sections", nargs="*", help=f"Only these sections ({', '.join(content_sections())})."
        )
        parser.add_argument(
            "--replace",
            nargs="+",
            default=[],
            metavar="RECORD",
            help="Overwrite these edited records with the file's text, as the report names "
            "them (e.g. methodology.glossaryterm:preview-0.1/glossary-cell); the replaced "
            "text stays in their history.",
        )

        parser.add_argument(
            "--source",
            metavar="DIR",
            help="Read the YAML from DIR/<section>/ (as dump_canonical_content --output "
            "writes it) instead of the files shipped with this release.",
        )

    def handle(self, *args, sections, replace, source, **options):
        def progress(percent, message):
            self.stdout.write(f"[{percent:3d}%] {message}")

        try:
            reports = content_load(
                sections=sections or None, replace=replace, source=source, progress=progress
            )
        except DomainError as exc:
            raise CommandError(str(exc.message)) from exc
        for line in reports:
            if ": kept " in line:
                self.stdout.write(self.style.WARNING(line))
        self.stdout.write(self.style.SUCCESS("Canonical content loaded."))
