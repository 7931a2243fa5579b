from django.core.management.base import BaseCommand, CommandError

from mica.bilingual import LANGUAGES
from mica.methodology.exports import methodology_pack
from mica.methodology.models import Edition
from mica.methodology.selectors import edition_current, edition_get


class Command(BaseCommand):
    help = "Print an edition's methodology Markdown pack (English or Korean)."

    def add_arguments(self, parser):
        parser.add_argument("--lang", choices=LANGUAGES, default="en")
        parser.add_argument("--edition", help="Edition slug (default: the current edition).")

    def handle(self, *args, lang, edition, **options):
        try:
            record = edition_get(edition) if edition else edition_current()
        except Edition.DoesNotExist as missing:
            raise CommandError(f"No edition {edition!r}.") from missing
        if record is None:
            raise CommandError("No edition exists; run load_canonical_content first.")
        # Exactly the rendered text: no newline is added after it.
        self.stdout.write(methodology_pack(record, lang), ending="")
