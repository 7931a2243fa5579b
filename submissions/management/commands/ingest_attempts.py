import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError
from mica.parsers import unique_keys
from submissions.ingest import attempts_ingest_batch


class Command(BaseCommand):
    help = "Record attempts from a JSON Lines file, all or nothing, as a staff user."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--as-user", required=True, help="Username of a staff account.")

    def handle(self, *args, file, as_user, **options):
        try:
            actor = get_user_model().objects.get(username=as_user, is_staff=True)
        except get_user_model().DoesNotExist as missing:
            raise CommandError(f"No staff user {as_user!r}.") from missing
        payloads = []
        # Lines end at "\n" only, as in the API's JSON Lines (mica.parsers.json_lines).
        with open(file, encoding="utf-8", newline="\n") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    payloads.append(
                        json.loads(
                            line, parse_constant=_refuse_constant, object_pairs_hook=unique_keys
                        )
                    )
                except ValueError as error:
                    raise CommandError(f"line {number}: not valid JSON ({error})") from error
                except DomainError as refused:
                    raise CommandError(
                        f"line {number}: {refused.message} {refused.field_errors}"
                    ) from refused
        try:
            results = attempts_ingest_batch(payloads=payloads, actor=actor)
        except DomainError as refused:
            raise CommandError(f"{refused.message} {refused.field_errors}") from refused
        created = sum(1 for _attempt, was_created in results if was_created)
        self.stdout.write(
            self.style.SUCCESS(
                f"{created} attempts recorded, {len(results) - created} already recorded."
            )
        )


def _refuse_constant(name):
    raise ValueError(f"{name} is not a number MICA accepts")
