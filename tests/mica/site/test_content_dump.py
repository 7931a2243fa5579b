"""manage.py dump_canonical_content: the records back to the YAML the loaders read."""

import importlib
import os
import shutil
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from catalogue.models import TaskDefinition
from governance.models import Refusal
from markets.models import Hazard
from mica.content.loading import (
    Folded,
    Quoted,
    SafeLoader,
    content_dump,
    display_width,
    dump_yaml,
)
from mica.errors import ValidationFailed
from mica.methodology.models import Chapter, Edition, GlossaryTerm

SEED = Path(__file__).resolve().parents[2] / "fixtures/seeds/000_eec7d944ca90690a.txt"


def content_dirs(registry):
    """{section: the module's CONTENT_DIR} for a registry of (section, dotted path)."""
    return {
        name: Path(importlib.import_module(path.rpartition(".")[0]).CONTENT_DIR)
        for name, path in registry
    }


SHIPPED = content_dirs(settings.CANONICAL_CONTENT_DUMPERS)


def yaml_files(directory):
    return sorted(path.relative_to(directory) for path in Path(directory).rglob("*.yaml"))


def tree(directory):
    """Every path under `directory` with its bytes (None for a directory): a snapshot."""
    directory = Path(directory)
    if not directory.exists():
        return None
    return {
        str(path.relative_to(directory)): None if path.is_dir() else path.read_bytes()
        for path in sorted(directory.rglob("*"))
    }


def dump(*arguments):
    out = StringIO()
    call_command("dump_canonical_content", *arguments, stdout=out)
    return out.getvalue()


def read(path):
    """The file as yaml.safe_load reads it (with libyaml's parser when PyYAML has it)."""
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=SafeLoader)  # noqa: S506


def by_key(records, key, value):
    return next(record for record in records if record[key] == value)


# ------------------------------------------------------------------ round trip


@pytest.mark.django_db
def test_a_freshly_loaded_database_dumps_the_shipped_yaml(canonical_content, tmp_path):
    output = dump("--output", str(tmp_path))
    assert "Canonical content written." in output
    assert set(SHIPPED) == {"methodology", "markets", "catalogue", "governance"}
    for section, shipped_dir in SHIPPED.items():
        dumped_dir = tmp_path / section
        # The same files, in the same layout (tasks/<family>.yaml included) ...
        assert yaml_files(dumped_dir) == yaml_files(shipped_dir), section
        for name in yaml_files(shipped_dir):
            # ... holding the same records and texts. No normalisation is needed: a
            # value the loader defaults is left out where the files leave it out, and
            # spelt out (number: null, idempotency: null) where they spell it out.
            # families.yaml's timeout_basis is not stored: it is derived from the
            # timeout by the mapping that file's header documents.
            assert read(dumped_dir / name) == read(shipped_dir / name), f"{section}/{name}"
    # The methodology files come back byte for byte, their comments included.
    for name in yaml_files(SHIPPED["methodology"]):
        shipped = (SHIPPED["methodology"] / name).read_text(encoding="utf-8")
        assert (tmp_path / "methodology" / name).read_text(encoding="utf-8") == shipped, name
    # Every other file keeps the comments it opens with.
    kr = (tmp_path / "markets/kr.yaml").read_text(encoding="utf-8")
    assert kr.startswith("# MICA market edition: South Korea (KR)\n")


@pytest.mark.django_db(transaction=True)
@pytest.mark.vendor
def test_dump_then_load_into_an_empty_database_exports_the_seed(canonical_content, tmp_path):
    dump("--output", str(tmp_path))
    call_command("flush", interactive=False, verbosity=0)
    assert not Edition.objects.exists() and not TaskDefinition.objects.exists()
    call_command("load_canonical_content", "--source", str(tmp_path), stdout=StringIO())
    out = StringIO()
    call_command("export_methodology", "--lang", "en", stdout=out)
    assert out.getvalue().encode("utf-8") == SEED.read_bytes()


@pytest.mark.django_db
def test_edits_made_in_the_database_appear_in_the_dump(canonical_content, tmp_path):
    term = GlossaryTerm.objects.get(section_id="system-snapshot")
    term.term_ko = "시스템 스냅샷(편집됨)"
    term.save()
    definition = TaskDefinition.objects.get(slug="sd-all-in-price-comparison")
    version = definition.current_version
    version.title_en = "Put the cheapest equivalent offer in the cart, ready for payment"
    version.save()
    hazard = Hazard.objects.get(market_edition__market__code="KR", position=1)
    hazard.detail_ko = "편집된 위험 설명입니다.  두 칸 띄운 문장과\n줄바꿈도 그대로 남습니다. " * 6
    hazard.save()
    refusal = Refusal.objects.get(key="no-paid-placement")
    refusal.text_en = "We do not take payment for placement, ever."
    refusal.save()

    content_dump(output=tmp_path)

    glossary = read(tmp_path / "methodology/glossary.yaml")
    assert by_key(glossary, "section_id", "system-snapshot")["term"] == {
        "en": "System snapshot",
        "ko": "시스템 스냅샷(편집됨)",
    }
    shipped = read(SHIPPED["methodology"] / "glossary.yaml")
    assert [entry for entry in glossary if entry["section_id"] != "system-snapshot"] == [
        entry for entry in shipped if entry["section_id"] != "system-snapshot"
    ]
    tasks = read(tmp_path / "catalogue/tasks/shopping-delivery.yaml")
    assert by_key(tasks, "id", "sd-all-in-price-comparison")["title"]["en"] == version.title_en
    kr = read(tmp_path / "markets/kr.yaml")
    assert kr["hazards"][0]["detail"]["ko"] == hazard.detail_ko
    governance = read(tmp_path / "governance/governance.yaml")
    assert by_key(governance["refusals"], "key", "no-paid-placement")["text"]["en"] == (
        refusal.text_en
    )


@pytest.mark.django_db
def test_without_output_each_section_writes_into_its_own_content_folder(
    canonical_content, tmp_path, monkeypatch
):
    for section, directory in SHIPPED.items():
        copy = tmp_path / section / "content"
        shutil.copytree(directory, copy)
        (copy / "NOTES.txt").write_text("not content\n")
        module = importlib.import_module(
            dict(settings.CANONICAL_CONTENT_DUMPERS)[section].rpartition(".")[0]
        )
        monkeypatch.setattr(module, "CONTENT_DIR", copy)
    Chapter.objects.filter(section_id="why-mica").update(title_en="Why MICA is here")

    output = dump()

    for section in SHIPPED:
        folder = tmp_path / section
        assert f"{section}: wrote" in output
        assert (folder / "content/NOTES.txt").read_text() == "not content\n"
        assert sorted(path.name for path in folder.iterdir()) == ["content"]  # no leftovers
    chapters = read(tmp_path / "methodology/content/chapters.yaml")
    assert chapters[0]["title"]["en"] == "Why MICA is here"


# ------------------------------------------------------------------ refusals


@pytest.mark.django_db
def test_an_unknown_section_is_refused_and_nothing_is_written(canonical_content, tmp_path):
    target = tmp_path / "out"
    with pytest.raises(CommandError) as refused:
        dump("methodology", "glossary", "--output", str(target))
    message = str(refused.value)
    assert "Unknown content section: glossary." in message
    assert "Known sections: methodology, markets, catalogue, governance." in message
    assert not target.exists()


@pytest.mark.django_db
def test_an_output_that_is_a_file_is_refused(canonical_content, tmp_path):
    target = tmp_path / "out.yaml"
    target.write_text("keep me\n")
    with pytest.raises(CommandError, match="out.yaml exists and is not a directory"):
        dump("--output", str(target))
    assert target.read_text() == "keep me\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.yaml"]
    with pytest.raises(CommandError, match="cannot be created: .*out.yaml is not a directory"):
        dump("--output", str(target / "below"))
    with pytest.raises(CommandError, match="Name the directory"):
        dump("--output", "")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.yaml"]


@pytest.mark.django_db
def test_an_unwritable_output_is_refused_and_nothing_is_written(canonical_content, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            # Running as root, permissions do not stop a write: a path below a
            # regular file can never be created, whoever asks.
            (tmp_path / "plain-file").write_text("")
            target, refusal = tmp_path / "plain-file/out", "plain-file is not a directory"
        else:
            target, refusal = locked / "out", "locked is not writable"
        before = tree(tmp_path)
        with pytest.raises(CommandError, match=refusal):
            dump("markets", "--output", str(target))
        with pytest.raises(ValidationFailed, match=refusal):
            content_dump(sections=["governance"], output=target)
        assert tree(tmp_path) == before
    finally:
        locked.chmod(0o700)


@pytest.mark.django_db
def test_a_failing_section_leaves_the_output_as_it_was(canonical_content, tmp_path, monkeypatch):
    content_dump(output=tmp_path)
    before = tree(tmp_path)
    Chapter.objects.filter(section_id="why-mica").update(title_en="Changed")

    def broken(directory, report):
        raise ValidationFailed("governance refused")

    monkeypatch.setattr("governance.content_dump.dump", broken)
    with pytest.raises(CommandError, match="governance refused"):
        dump("--output", str(tmp_path))
    # Methodology was written first, into a temporary directory it never left.
    assert tree(tmp_path) == before


@pytest.mark.django_db
def test_a_failure_while_moving_in_puts_every_file_back(canonical_content, tmp_path):
    content_dump(sections=["methodology"], output=tmp_path)
    glossary = tmp_path / "methodology/glossary.yaml"
    glossary.unlink()
    glossary.mkdir()  # moving the new glossary in fails, after chapters.yaml moved in
    before = tree(tmp_path)
    Chapter.objects.filter(section_id="why-mica").update(title_en="Changed")
    with pytest.raises(ValidationFailed, match="glossary.yaml cannot be written"):
        content_dump(sections=["methodology"], output=tmp_path)
    assert tree(tmp_path) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["methodology"]


# ------------------------------------------------------------------ the YAML itself

TRICKY_TEXTS = [
    "A plain sentence.",
    "A long sentence " * 20,
    "한국어 문장이 길게 이어집니다. " * 15,
    "두 칸  띄운 글과   세 칸 띄운 글이 " * 8,
    " leading space, then a long line that must still fold somewhere " * 3,
    "trailing space ",
    "line one\nline two\n\nafter a blank line " * 5,
    "a\n  indented line that is long enough to be folded if nothing stopped it " * 3,
    "https://example.com/" + "x" * 120 + " then words after a very long word",
    "tab\tinside and: a colon, # a hash, 'quotes' and \"double quotes\" " * 3,
    "yes",
    "",
    "ends with a newline\n",
]


@pytest.mark.parametrize(
    "style",
    [
        {"literal_long_texts": True},
        {"indent_sequences": True, "double_quotes": True},
        {},
    ],
)
@pytest.mark.parametrize("wrap", [str, Folded, Quoted])
def test_every_text_reads_back_as_it_was_written(style, wrap):
    data = {"texts": [{"en": wrap(text), "ko": wrap(text)} for text in TRICKY_TEXTS]}
    written = dump_yaml(data, **style)
    assert yaml.safe_load(written) == {"texts": [{"en": t, "ko": t} for t in TRICKY_TEXTS]}


def test_folded_texts_fit_in_79_columns_korean_counted_double():
    paragraph = {
        "en": Folded(
            ("Every line of a folded paragraph fits the width of an editor. " * 6).strip()
        ),
        "ko": Folded(("접힌 문단의 모든 줄은 편집기 너비에 맞습니다. " * 8).strip()),
    }
    written = dump_yaml({"statement": paragraph})
    lines = written.splitlines()
    assert lines[1] == "  en: >-" and len(lines) > 10
    assert max(display_width(line) for line in lines) <= 79
    assert yaml.safe_load(written) == {"statement": paragraph}


@pytest.mark.django_db
def test_a_dumped_file_missing_a_korean_text_is_refused_and_changes_nothing(
    canonical_content, tmp_path
):
    """Every public string exists in English and Korean: a load refuses a file without one."""
    dump("--output", str(tmp_path))
    glossary = tmp_path / "methodology" / "glossary.yaml"
    terms = yaml.safe_load(glossary.read_text(encoding="utf-8"))
    terms[0]["definition"]["ko"] = ""
    terms[1]["definition"]["en"] = "A changed English definition."
    glossary.write_text(yaml.safe_dump(terms, allow_unicode=True), encoding="utf-8")
    before = list(GlossaryTerm.objects.order_by("pk").values_list("definition_en", "definition_ko"))
    with pytest.raises(CommandError, match=r"glossary\[0\]\.definition: no ko text"):
        call_command("load_canonical_content", "--source", str(tmp_path), stdout=StringIO())
    after = list(GlossaryTerm.objects.order_by("pk").values_list("definition_en", "definition_ko"))
    assert after == before


@pytest.mark.django_db
def test_a_load_from_a_missing_directory_is_refused(canonical_content, tmp_path):
    with pytest.raises(CommandError, match="is not a readable directory. Nothing was loaded."):
        call_command("load_canonical_content", "--source", str(tmp_path / "nope"))
    (tmp_path / "methodology").mkdir()
    with pytest.raises(CommandError, match="cannot be read as YAML"):
        call_command("load_canonical_content", "methodology", "--source", str(tmp_path))
