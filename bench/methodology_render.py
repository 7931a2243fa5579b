"""Median time of an uncached render of /methodology/ (English and Korean).

Runs on a fresh embedded database in a temporary folder:
    .venv/bin/python bench/methodology_render.py [repeats]

Smoke size (CI): `bench/methodology_render.py 3`.
"""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from prepared import prepared_copy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["MICA_VAR_DIR"] = tempfile.mkdtemp(prefix="mica-bench-")
os.environ.pop("MICA_DATABASE_URL", None)
prepared_copy(os.environ["MICA_VAR_DIR"])
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402


def main(repeats):
    call_command("migrate", verbosity=0)
    call_command("load_canonical_content", stdout=open(os.devnull, "w"))
    client = Client()
    for path in ("/methodology/", "/ko/methodology/"):
        client.get(path)  # warm imports and template loading, not the data
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(path)
            timings.append(time.perf_counter() - started)
            assert response.status_code == 200
        print(
            f"{path}: median {statistics.median(timings) * 1000:.1f} ms over {repeats} renders "
            f"({len(response.content) // 1024} KiB)"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
