"""python -m mica_verify SOURCE [--json] | python -m mica_verify --download FOLDER URL"""

import argparse
import sys

from mica_verify import aggregates, chain, manifest, recompute
from mica_verify.report import Report
from mica_verify.source import Cached, Missing, download, source_open


def verify(where):
    """Every check of the export set at `where` (a base URL or a folder): the report."""
    source = Cached(source_open(where))
    report = Report(source.where)
    manifest.files_check(source, report)
    signers = chain.log_check(source, report)
    manifest.signature_check(source, report, signers)
    aggregates.aggregates_check(recompute.figures_check(source, report), report)
    return report


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="python -m mica_verify",
        description="Check a MICA export set and recompute its published figures from it.",
    )
    parser.add_argument(
        "source", nargs="?", help="a site's base URL, or a folder --download filled"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--download",
        nargs=2,
        metavar=("FOLDER", "URL"),
        help="copy everything the check reads from the site at URL into FOLDER",
    )
    arguments = parser.parse_args(argv)
    if bool(arguments.source) == bool(arguments.download):
        parser.error("give either SOURCE or --download FOLDER URL")
    return arguments


def main(argv=None):
    arguments = _arguments(argv)
    if arguments.download:
        folder, url = arguments.download
        try:
            names = download(url, folder)
        except (Missing, ValueError, KeyError) as error:
            print(f"mica_verify: download failed: {error}", file=sys.stderr)
            return 2
        print(f"mica_verify: {len(names)} files from {url} in {folder}")
        return 0
    report = verify(arguments.source)
    sys.stdout.write(report.dumps() if arguments.json else report.as_text())
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
