from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from submissions.demo import load_demo_runs


class Command(BaseCommand):
    help = "Load a labelled synthetic (demo) run set. It is never publication eligible."

    def handle(self, *args, **options):
        actor, _ = get_user_model().objects.get_or_create(
            username="mica-demo-loader", defaults={"is_staff": True, "is_active": False}
        )
        results = load_demo_runs(actor=actor)
        created = sum(1 for _attempt, was_created in results if was_created)
        self.stdout.write(
            self.style.SUCCESS(
                f"{created} demo attempts recorded ({len(results) - created} already present)."
            )
        )
