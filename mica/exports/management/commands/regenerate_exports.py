from mica.exports.publish import exports_build_and_publish
from mica.exports.services import exports_request_regeneration
from mica.jobs.commands import JobCommand


class Command(JobCommand):
    help = "Regenerate, check and publish every export of the current edition."
    job_name = "export regeneration"

    def queue(self):
        return exports_request_regeneration()

    def run_here(self):
        manifest = exports_build_and_publish(progress=self.progress)
        for entry in manifest["files"]:
            self.stdout.write(f"{entry['sha256']}  {entry['size']:>10}  {entry['name']}")
        return f"Published to {manifest['edition']['slug']}."
