from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError
from submissions.demo import load_demo_runs
from submissions.ingest import recording_grant


class Command(BaseCommand):
    help = "Load a labelled synthetic (demo) run set. It is never publication eligible."

    def handle(self, *args, **options):
        actor, created = get_user_model().objects.get_or_create(
            username="mica-demo-loader", defaults={"is_staff": True}
        )
        if created:
            actor.set_unusable_password()  # it records the demo runs and never signs in
            actor.save(update_fields=["password"])
        recording_grant(actor)
        try:
            results = load_demo_runs(actor=actor)
        except DomainError as refused:
            rule = ", ".join(refused.field_errors.get("rule", []))
            raise CommandError(f"{refused.message} ({rule})") from refused
        created = sum(1 for _attempt, was_created in results if was_created)
        self.stdout.write(
            self.style.SUCCESS(
                f"{created} demo attempts recorded ({len(results) - created} already present)."
            )
        )
