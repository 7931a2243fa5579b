"""Holdout commitments (issue 41, item 5).

PORTAL.md: "the holdout is committed to by salted hashes per edition and revealed on
retirement". When an edition is published, its log entry carries one commitment per
holdout task, SHA-256 over a per-task salt and the task's content hash, naming no task;
when a holdout task is retired or made public, a later entry reveals its salt, and the
verifier anyone can run checks it opens a commitment made before.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from catalogue.commitments import commitment_of
from catalogue.models import HoldoutCommitment, HoldoutSalt, TaskDefinition
from catalogue.services import task_retire
from mica.content.models import PublicationLogEntry
from mica.methodology.models import Edition
from mica.methodology.services import edition_publish
from tests.factories import HOLDOUT_CANARY, LeadFactory, holdout_task

pytestmark = [pytest.mark.vendor, pytest.mark.django_db]
ROOT = Path(__file__).resolve().parents[2]


def published(lead):
    edition_publish(edition_id=Edition.objects.get().pk, actor=lead)
    return PublicationLogEntry.objects.get(kind="edition")


def test_an_edition_commits_to_each_holdout_task_without_naming_it(canonical_content):
    lead = LeadFactory()
    first, second = holdout_task(), holdout_task("ec-second-holdout-item")
    entry = published(lead)
    commitments = entry.subject["holdout_commitments"]
    holdout = TaskDefinition.objects.filter(task_set="holdout").exclude(lifecycle="retired")
    assert len(commitments) == holdout.count() == 2
    assert commitments == sorted(commitments)
    text = json.dumps(entry.subject)
    assert first.slug not in text and second.slug not in text and HOLDOUT_CANARY not in text
    for definition in (first, second):
        salt = HoldoutSalt.objects.get(definition=definition).salt
        version = TaskDefinition.objects.get(pk=definition.pk).current_version
        assert commitment_of(salt, version.content_hash) in commitments
    assert HoldoutCommitment.objects.count() == 2


def test_retiring_a_holdout_task_reveals_its_salt_and_the_verifier_checks_it(
    canonical_content, client, tmp_path
):
    lead = LeadFactory()
    definition = holdout_task()
    edition_entry = published(lead)
    task_retire(definition_id=definition.pk, actor=lead, reason="Exposed in a public forum.")
    reveal = PublicationLogEntry.objects.get(kind="holdout-reveal")
    assert reveal.sequence > edition_entry.sequence
    (opened,) = reveal.subject["opens"]
    salt = reveal.subject["salt"]
    assert commitment_of(salt, opened["content_hash"]) == opened["commitment"]
    assert opened["commitment"] in edition_entry.subject["holdout_commitments"]
    assert HoldoutSalt.objects.get(definition=definition).revealed_at is not None
    # Retired once, revealed once.
    TaskDefinition.objects.get(pk=definition.pk).save()
    assert PublicationLogEntry.objects.filter(kind="holdout-reveal").count() == 1

    log = json.loads(b"".join(client.get("/transparency/log.json").streaming_content))
    assert checks_of(log, client, tmp_path) == 0
    # A wrong salt revealed: the verifier names the reveal.
    for entry in log["entries"]:
        if entry["kind"] == "holdout-reveal":
            entry["subject"]["salt"] = "0" * 64
    assert checks_of(log, client, tmp_path) == 1


def checks_of(log, client, tmp_path):
    """The verifier's reveal check on this log, run as its own process (a forged salt
    also breaks the entry's digest and signature, which its chain check reports)."""
    folder = tmp_path / "site"
    folder.mkdir(exist_ok=True)
    (folder / "log.json").write_text(json.dumps(log))
    code = (
        "import json, sys\n"
        "from mica_verify import chain\n"
        "log = json.load(open(sys.argv[1]))\n"
        "failed = []\n"
        "class Report:\n"
        "    def check(self, area, name, passed, detail=''):\n"
        "        passed or failed.append(name)\n"
        "chain.reveals_check(log['entries'], Report())\n"
        "sys.exit(1 if failed else 0)\n"
    )
    # The verifier's own package, as `pip install ./mica_verify` puts it on the path.
    environment = {"PYTHONPATH": str(ROOT / "mica_verify"), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-c", code, str(folder / "log.json")],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
    )
    assert run.returncode in (0, 1), run.stderr
    return run.returncode


def test_making_a_holdout_task_public_reveals_its_salt(canonical_content):
    lead = LeadFactory()
    definition = holdout_task()
    published(lead)
    definition = TaskDefinition.objects.get(pk=definition.pk)
    definition.task_set = "public"
    definition.save()
    (reveal,) = PublicationLogEntry.objects.filter(kind="holdout-reveal")
    assert reveal.subject["task"] == definition.slug
