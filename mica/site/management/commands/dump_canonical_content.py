from django.core.management.base import BaseCommand, CommandError

from mica.content.loading import content_dump, content_dump_sections
from mica.errors import DomainError


class Command(BaseCommand):
    help = (
        "Write the current canonical records back to YAML, in the shape "
        "load_canonical_content reads: into each app's content/ folder (so `git diff` "
        "shows the editors' work), or into DIR/<section>/ with --output."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "sections",
            nargs="*",
            help=f"Only these sections ({', '.join(content_dump_sections())}).",
        )
        parser.add_argument(
            "--output",
            metavar="DIR",
            help="Write into DIR/<section>/ instead of each app's content/ folder.",
        )

    def handle(self, *args, sections, output, **options):
        def progress(percent, message):
            self.stdout.write(f"[{percent:3d}%] {message}")

        try:
            content_dump(sections=sections or None, output=output, progress=progress)
        except DomainError as exc:
            raise CommandError(str(exc.message)) from exc
        self.stdout.write(self.style.SUCCESS("Canonical content written."))
