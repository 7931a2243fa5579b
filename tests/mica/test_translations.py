"""Every interface string exists in Korean, and the compiled catalogue says so too."""

import ast
import gettext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale/ko/LC_MESSAGES/django.po"
MO = ROOT / "locale/ko/LC_MESSAGES/django.mo"


def po_entries():
    """(msgid, msgstr, flags) for every entry of the .po file but the header."""
    return po_entries_of(PO.read_text(encoding="utf-8"))


def po_entries_of(text):
    entries = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.strip()]
        flags = " ".join(line for line in lines if line.startswith("#,"))
        fields, current = {}, None
        for line in lines:
            if line.startswith(("msgctxt ", "msgid ", "msgid_plural ", "msgstr ", "msgstr[0] ")):
                keyword, _, line = line.partition(" ")
                current = {"msgstr[0]": "msgstr"}.get(keyword, keyword)
                fields[current] = ""
            if current and line.startswith('"'):
                fields[current] += ast.literal_eval(line)
        if fields.get("msgid"):
            if "msgid_plural" in fields:
                flags += " plural:" + fields["msgid_plural"]
            if "msgctxt" in fields:
                flags += " context:" + fields["msgctxt"]
            entries.append((fields["msgid"], fields.get("msgstr", ""), flags))
    return entries


def test_every_interface_string_has_korean():
    entries = po_entries()
    assert len(entries) > 50
    untranslated = [msgid for msgid, msgstr, _flags in entries if not msgstr.strip()]
    fuzzy = [msgid for msgid, _msgstr, flags in entries if "fuzzy" in flags]
    assert not untranslated, untranslated
    assert not fuzzy, fuzzy


def test_compiled_catalogue_matches_the_po_file():
    with MO.open("rb") as handle:
        catalogue = gettext.GNUTranslations(handle)

    def compiled(msgid, flags):
        if " context:" in flags:
            return catalogue.pgettext(flags.split(" context:", 1)[1], msgid)
        if " plural:" in flags:
            return catalogue.ngettext(msgid, flags.split(" plural:", 1)[1], 1)
        return catalogue.gettext(msgid)

    stale = [m for m, msgstr, flags in po_entries() if compiled(m, flags) != msgstr]
    assert not stale, f"run `make messages`; stale in django.mo: {stale[:5]}"


def test_korean_strings_are_not_english_copies():
    copies = [
        m for m, s, _ in po_entries() if m == s and m not in {"API", "MICA API", "URL", "SHA-256"}
    ]
    assert not copies, copies


SOURCE_DIRS = ["mica", "markets", "catalogue", "submissions", "governance", "templates"]


def test_every_string_in_the_source_is_in_the_catalogue(tmp_path, settings, monkeypatch):
    """Extract the strings afresh: a string added without a Korean entry fails here."""
    import shutil

    from django.core.management import call_command

    from tests.support import require

    require(shutil.which("xgettext"), "GNU gettext (xgettext) is not installed")
    # makemessages writes into the nearest locale folder, so it runs on a copy.
    for name in SOURCE_DIRS:
        # The canonical YAML holds content, not interface strings; mica/content is code.
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("*.yaml"))
    (tmp_path / "locale").mkdir()
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    monkeypatch.chdir(tmp_path)
    call_command("makemessages", locale=["ko"], no_location=True, verbosity=0)
    extracted = (tmp_path / "locale/ko/LC_MESSAGES/django.po").read_text(encoding="utf-8")
    fresh = {m for m, _s, _f in po_entries_of(extracted)}
    known = {m for m, _s, _f in po_entries()}
    assert len(fresh) > 100
    assert not fresh - known, f"run `make messages` and translate: {sorted(fresh - known)[:10]}"
