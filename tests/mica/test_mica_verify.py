"""mica_verify, the verifier anyone can run (issue 41, item 6), run as its users run it:
`python -m mica_verify FOLDER` and `python -m mica_verify URL`, in a process of its own.

Seed: "task-level results are published so the analysis can be redone independently";
the portal: "`mica_verify` recomputes every published figure, blocker and analysis from
the export set alone". A set as published passes; a changed figure, a swapped file, an
entry removed from the log or re-signed with another key fails, named.
"""

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command

from mica.publication_chain import canonical, entry_content, entry_digest, public_key_id
from mica.signing import sign
from tests.factories import seeded_attempts

pytestmark = [pytest.mark.vendor, pytest.mark.django_db(transaction=False)]

ROOT = Path(__file__).resolve().parents[2]
TASK = "ec-reschedule-three-party"


def run_verifier(*arguments):
    # The folder holding the package is what `pip install -e ./mica_verify` puts on the
    # path; given here too, so the test runs the checkout's verifier in any environment.
    environment = {"PYTHONPATH": str(ROOT / "mica_verify"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "mica_verify", *map(str, arguments)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
        check=False,
    )


@pytest.fixture
def signing_key_file(settings, tmp_path):
    settings.SIGNING_KEY = ""
    settings.SIGNING_KEY_FILE = tmp_path / "var" / "signing_key"


@pytest.fixture
def export_folder(client, staff, operator, settings, tmp_path, signing_key_file):
    """The published export set with the log and the key, as --download leaves it."""
    seeded_attempts(client, staff, operator)
    settings.EXPORT_DIR = tmp_path / "exports"
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))  # noqa: SIM115
    folder = tmp_path / "set"
    shutil.copytree(settings.EXPORT_DIR / "current", folder)
    (folder / "log.json").write_bytes(b"".join(client.get("/transparency/log.json")))
    (folder / "key.pem").write_bytes(client.get("/transparency/key").content)
    return folder


def test_the_published_set_checks_and_every_figure_recomputes(export_folder):
    result = run_verifier(export_folder, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, report["mismatches"]
    assert report["passed"] and report["mismatches"] == []
    checked = report["checked"]
    assert checked["files against the manifest"] >= 2 * 13
    assert checked["manifest signature"] == 1
    assert checked["publication log"] >= 3  # an entry, the key in force, the manifest
    # Two cells, each with every figure, its task and its blockers compared.
    assert checked["cell figures"] >= 2 * 20
    gate = json.loads((export_folder / "mica-gate.json").read_text())
    by_market = {cell["market"]: cell for cell in gate["cells"]}
    assert by_market["KR"]["publication_eligible"] is True
    assert by_market["JP"]["blockers"][0] == "not-independent-rerun"


def test_the_attempts_export_names_public_tasks_and_counts_what_the_cells_count(export_folder):
    attempts = json.loads((export_folder / "mica-attempts.json").read_text())
    kr = next(c for c in attempts["cells"] if "--kr--" in c["cell"])
    assert {a["task"] for a in kr["attempts"]} == {TASK}
    assert [a["eligible"] for a in kr["attempts"]].count(False) == 1
    assert attempts["thresholds"]["runs_per_task"] == 2


def rehash(folder, name):
    """Give `name`'s new bytes their size and digest in the manifest and sign it again
    with the site's key, as someone holding the key could."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    data = (folder / name).read_bytes()
    for entry in manifest["files"]:
        if entry["name"] == name:
            entry["size"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    manifest_path.write_text(json.dumps(manifest, ensure_ascii=False, indent=1))
    (folder / "manifest.json.sig").write_text(sign(manifest_path.read_bytes()) + "\n")


def mismatches(folder):
    result = run_verifier(folder, "--json")
    assert result.returncode == 1, result.stdout
    return {(m["area"], m["name"]) for m in json.loads(result.stdout)["mismatches"]}


def test_a_figure_changed_under_a_rehashed_manifest_is_named(export_folder):
    gate_path = export_folder / "mica-gate.json"
    gate = json.loads(gate_path.read_text())
    cell = next(c for c in gate["cells"] if c["market"] == "KR")
    cell["p95_seconds"] += 1.0
    # A withheld market figure published as if it were earned.
    market = next(m for m in gate["aggregates"][0]["markets"] if m["key"] == "KR")
    market["withheld_reason_code"], market["value"] = None, 75.0
    gate_path.write_text(json.dumps(gate, ensure_ascii=False, indent=1))
    rehash(export_folder, "mica-gate.json")
    found = mismatches(export_folder)
    # The files and the signature check (the key signed it); the figure does not, and the
    # log does not record this manifest.
    assert ("cell figures", f"{cell['cell']} p95_seconds") in found
    assert ("family and market figures", "acme-agent 2.1 market KR value") in found
    assert ("family and market figures", "acme-agent 2.1 market KR withheld") in found
    assert ("publication log", "manifest recorded") in found
    assert not any(
        area in ("files against the manifest", "manifest signature") for area, _ in found
    )


def test_a_swapped_file_is_named(export_folder):
    (export_folder / "mica-catalogue.csv").write_bytes(b"id,family\n")
    found = mismatches(export_folder)
    assert ("files against the manifest", "mica-catalogue.csv sha256") in found
    assert ("files against the manifest", "mica-catalogue.csv size") in found


def test_an_unsigned_manifest_fails_its_signature(export_folder):
    signature = export_folder / "manifest.json.sig"
    other = Ed25519PrivateKey.generate()
    signature.write_text(base64.b64encode(other.sign(b"something else")).decode())
    assert ("manifest signature", "manifest.json.sig") in mismatches(export_folder)


def log_with_two_entries(folder, client):
    """Publish the set a second time after a change, so the log holds two entries."""
    from mica.methodology.models import ChapterItem

    claim = ChapterItem.objects.filter(item_type="claim").first()
    claim.detail_en += " Amended."
    claim.save()
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))  # noqa: SIM115
    (folder / "log.json").write_bytes(b"".join(client.get("/transparency/log.json")))
    log = json.loads((folder / "log.json").read_text())
    assert len(log["entries"]) == 2
    return log


def test_a_log_entry_removed_is_named(export_folder, client):
    log = log_with_two_entries(export_folder, client)
    del log["entries"][0]
    (export_folder / "log.json").write_text(json.dumps(log))
    assert ("publication log", "entry 1") in mismatches(export_folder)


def test_a_log_entry_resigned_with_another_key_is_named(export_folder, client):
    log = log_with_two_entries(export_folder, client)
    other = Ed25519PrivateKey.generate()
    entry = log["entries"][0]
    entry["key_id"] = public_key_id(other.public_key())
    entry["digest"] = entry_digest(entry)
    entry["signature"] = base64.b64encode(other.sign(canonical(entry_content(entry)))).decode()
    (export_folder / "log.json").write_text(json.dumps(log))
    assert ("publication log", "entry 1") in mismatches(export_folder)


def test_a_live_site_checks_and_downloads(
    live_server, client, staff, operator, settings, tmp_path, signing_key_file
):
    seeded_attempts(client, staff, operator)
    settings.EXPORT_DIR = tmp_path / "exports"
    settings.SITE_URL = live_server.url
    call_command("regenerate_exports", "--sync", stdout=open("/dev/null", "w"))  # noqa: SIM115
    result = run_verifier(live_server.url)
    assert result.returncode == 0, result.stdout
    assert result.stdout.rstrip().endswith("every check passed")
    folder = tmp_path / "downloaded"
    assert run_verifier("--download", folder, live_server.url).returncode == 0
    assert {"manifest.json", "manifest.json.sig", "log.json", "key.pem"} <= {
        p.name for p in folder.iterdir()
    }
    assert run_verifier(folder).returncode == 0
