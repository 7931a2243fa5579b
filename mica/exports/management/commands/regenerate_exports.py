from mica.exports.publish import exports_build_and_publish
from mica.exports.services import exports_request_regeneration
from mica.jobs.commands import JobCommand
from mica.jobs.models import JobCause


class Command(JobCommand):
    help = (
        "Regenerate, check and publish every export of the current edition; files whose "
        "records have not changed since the last set are kept unless --full."
    )
    job_name = "export regeneration"
    full_help = "Write every file, changed or not."

    def queue(self):
        return exports_request_regeneration(full=self.full, cause=JobCause.COMMAND)

    def run_here(self):
        manifest = exports_build_and_publish(full=self.full, progress=self.progress)
        for entry in manifest["files"]:
            self.stdout.write(f"{entry['sha256']}  {entry['size']:>10}  {entry['name']}")
        if manifest.get("unchanged"):
            return f"Nothing changed: the published set of {manifest['edition']['slug']} stays."
        return f"Published to {manifest['edition']['slug']}."
