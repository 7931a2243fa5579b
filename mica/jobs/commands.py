from abc import ABCMeta, abstractmethod

from django.core.management.base import BaseCommand, CommandError

from mica.errors import DomainError


class JobCommand(BaseCommand, metaclass=ABCMeta):
    """A command that queues a tracked job, or with --sync does the work here, with progress.

    A subclass names its job (`job_name`), queues it (`queue`, returning the JobRun)
    and does it here (`run_here`, returning what to report). A refusal of the method's
    (a DomainError) leaves everything as it was and says why.
    """

    job_name = "the job"
    # A job that redoes only what changed since its last run offers --full (self.full).
    full_help = None

    def add_arguments(self, parser):
        parser.add_argument(
            "--sync", action="store_true", help="Run here and now instead of queueing a job."
        )
        if self.full_help:
            parser.add_argument("--full", action="store_true", help=self.full_help)

    def handle(self, *args, sync=False, full=False, **options):
        self.full = full
        if not sync:
            job_run = self.queue()
            self.stdout.write(f"Queued {self.job_name} as job run {job_run.pk}.")
            return
        try:
            done = self.run_here()
        except DomainError as refused:
            raise CommandError(f"Nothing was published: {refused.message}") from refused
        self.stdout.write(self.style.SUCCESS(done))

    @abstractmethod
    def queue(self):
        """Queue the job; return its JobRun."""

    @abstractmethod
    def run_here(self):
        """Do the work in this process, reporting through self.progress; return the line
        that says what was done."""

    def progress(self, percent, message=""):
        self.stdout.write(f"[{percent:3d}%] {message}")
