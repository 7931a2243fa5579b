"""A var directory with the embedded database migrated and the canonical content loaded,
made once and copied by each bench that would otherwise make the same (bench/smoke).

    .venv/bin/python bench/prepared.py DIRECTORY

Migrating and loading take most of a small bench's time (about a minute on a loaded
2-core machine), and every bench on SQLite starts with them. With BENCH_PREPARED naming
such a directory, `prepared_copy(var_dir)` copies it into the bench's own temporary var
directory; the bench's own migrate and load_canonical_content then find nothing to do.
Without it a bench starts from an empty directory, as before. PostgreSQL benches make
their database themselves.
"""

import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = "BENCH_PREPARED"


def prepared_copy(var_dir):
    """Copy the prepared var directory (BENCH_PREPARED) into `var_dir`, when one is named
    and the bench runs on SQLite; whether it did."""
    source = os.environ.get(VARIABLE)
    if not source or os.environ.get("MICA_DATABASE_URL"):
        return False
    shutil.copytree(source, var_dir, dirs_exist_ok=True)
    return True


def prepare(directory):
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    for name in list(os.environ):
        if name.startswith("MICA_"):
            del os.environ[name]
    os.environ.update(
        DJANGO_SETTINGS_MODULE="mica.settings", MICA_VAR_DIR=str(directory), MICA_JOBS_EAGER="1"
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    migrated = time.perf_counter()
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    print(
        f"prepared {directory}: migrated in {migrated - started:.1f} s, canonical content "
        f"loaded in {time.perf_counter() - migrated:.1f} s"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    prepare(sys.argv[1])
