"""Full export regeneration: the canonical 100-task catalogue, then a generated 10,000.

    .venv/bin/python bench/exports.py [tasks]

Runs on a fresh embedded database in a temporary folder. Each measured
regeneration runs in its own process, so the peak resident memory it prints
is that regeneration's alone (the Django process included). Targets: the
100-task catalogue under 5 s; 10,000 tasks under 120 s and 500 MB.

Smoke size (CI): `bench/exports.py 200`.
"""

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from prepared import prepared_copy

ROOT = Path(__file__).resolve().parents[1]


def _django():
    sys.path.insert(0, str(ROOT))
    os.environ.pop("MICA_DATABASE_URL", None)
    os.environ.pop("MICA_REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
    import django

    django.setup()


def prepare(extra_tasks):
    _django()
    from django.core.management import call_command

    from catalogue.synthetic import synthetic_catalogue_create

    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    if extra_tasks:
        synthetic_catalogue_create(extra_tasks)


def regenerate():
    _django()
    from catalogue.selectors import task_public_list
    from mica.exports.publish import exports_build_and_publish

    tasks = task_public_list().count()
    started = time.perf_counter()
    manifest = exports_build_and_publish()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = sum(f["size"] for f in manifest["files"]) / 1e6
    print(
        f"{tasks:>6} tasks: full regeneration {seconds:6.2f} s, peak memory {peak_mb:5.0f} MB, "
        f"{len(manifest['files'])} files, {size_mb:.1f} MB written"
    )


def run(step, var_dir, *arguments):
    env = {**os.environ, "MICA_VAR_DIR": var_dir}
    subprocess.run([sys.executable, __file__, step, *arguments], env=env, check=True)


def main(total):
    for tasks in (100, total):
        var_dir = tempfile.mkdtemp(prefix="mica-bench-exports-")
        prepared_copy(var_dir)
        run("prepare", var_dir, str(tasks - 100))
        run("regenerate", var_dir)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "prepare":
        prepare(int(sys.argv[2]))
    elif len(sys.argv) > 1 and sys.argv[1] == "regenerate":
        regenerate()
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
