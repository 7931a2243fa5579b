"""What `make run` does before it serves, in one process: migrate, load the canonical
content, publish the exports and the baked pages, each step as its own command does it.
Django starts (imports and checks) once instead of four times, which is most of what a
restart with nothing to do costs (issue 34: a no-change restart is quick)."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

STEPS = (
    ("migrate", {"interactive": False}),
    ("load_canonical_content", {}),
    ("regenerate_exports", {"sync": True}),
    ("bake_pages", {"sync": True}),
)


class Command(BaseCommand):
    help = (
        "Migrate, load the canonical content, and publish the exports and the baked pages "
        "here, as make run does before it serves; what is current is kept as it is."
    )

    def handle(self, **options):
        for name, arguments in STEPS:
            call_command(name, stdout=self.stdout, stderr=self.stderr, **arguments)
