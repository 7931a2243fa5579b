"""Canonical content: readable YAML in each app's content/ folder.

The YAML seeds an empty database. Once content exists the database is the source
of truth: a load creates what is missing, refreshes what nobody has edited since it
was loaded, and leaves every edited record alone, saying so (`CanonicalLoad`).

Every app that owns content registers a loader in settings.CANONICAL_CONTENT_LOADERS.
A loader takes a `CanonicalLoad` and writes each record through `load.record(...)`.
"""

import contextlib
import datetime
import decimal
import errno
import hashlib
import importlib
import json
import os
import shutil
import tempfile
import unicodedata
from collections import Counter
from pathlib import Path

import yaml
from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from mica.bilingual import LANGUAGES, field_pair
from mica.content.models import LoadedRecord
from mica.errors import ValidationFailed

# libyaml's parser when PyYAML was built with it: it reads the content ten times faster.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return yaml.load(handle, Loader=SafeLoader)  # noqa: S506 (a safe loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise ValidationFailed(
            _("%(path)s cannot be read as YAML: %(error)s")
            % {"path": path, "error": getattr(error, "strerror", None) or error}
        ) from error


def translated(item, field):
    """{'title': {'en': .., 'ko': ..}} -> {'title_en': .., 'title_ko': ..}; both required."""
    values = item.get(field) or {}
    missing = [lang for lang in LANGUAGES if not values.get(lang)]
    if missing:
        record = next((item[k] for k in ("section_id", "id", "key", "slug") if k in item), "")
        raise ValidationFailed(
            _("Content field %(field)s of %(record)s has no text in: %(languages)s.")
            % {"field": field, "record": record or "?", "languages": ", ".join(missing)}
        )
    return {f"{field}_{lang}": values[lang] for lang in LANGUAGES}


def texts(item, *fields, optional=()):
    """The per-language columns of several translated fields; optional ones may be absent.

    An optional field may also be one plain string, used for both languages (a
    cited work's title keeps its original wording in Korean too).
    """
    values = {}
    for name in fields:
        values.update(translated(item, name))
    for name in optional:
        value = item.get(name)
        if not value:
            values.update({f"{name}_{lang}": "" for lang in LANGUAGES})
        elif isinstance(value, str):
            values.update({f"{name}_{lang}": value for lang in LANGUAGES})
        else:
            values.update(translated(item, name))
    return values


def content_sections():
    return [name for name, _path in settings.CANONICAL_CONTENT_LOADERS]


def _comparable(field, value):
    """One spelling per value, whether it comes from the YAML or reads back from the database."""
    if isinstance(value, models.Model):
        return value.pk
    value = field.to_python(value)
    if isinstance(value, decimal.Decimal):
        return str(value.normalize())
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


def _comparable_key(value):
    return value.pk if isinstance(value, models.Model) else value


def fields_digest(model, values):
    meta = model._meta
    plain = {name: _comparable(meta.get_field(name), value) for name, value in values.items()}
    return hashlib.sha256(json.dumps(plain, sort_keys=True, default=str).encode()).hexdigest()


def record_digest(record, names):
    """The digest of a record's fields, read as the loader would have written them."""
    meta = record._meta
    return fields_digest(
        type(record), {name: getattr(record, meta.get_field(name).attname) for name in names}
    )


class CanonicalLoad:
    """One load of the canonical content: creates, refreshes, or keeps each record.

    A record is written from the file when it is missing, or when it still holds
    exactly what was last loaded into it (the file changed, nobody else did). A
    record edited since is kept and reported; `replace` names records to overwrite
    anyway, through a normal save, so their history keeps the replaced text.
    """

    OUTCOMES = ("created", "updated", "unchanged", "kept")

    def __init__(self, *, replace=(), source=None):
        self.replace = set(replace)
        self.source = Path(source) if source else None
        self.met = set()
        self.reports = []
        self.counts = Counter()
        self.section = ""
        self._loaded = dict(LoadedRecord.objects.values_list("name", "digest"))
        self._digests = {}
        self._indexes = {}

    def directory(self, shipped):
        """Where this section's YAML is read: the shipped folder, or `source/<section>`
        (the layout `dump_canonical_content --output` writes)."""
        return self.source / self.section if self.source else shipped

    def report(self, message):
        self.reports.append(f"{self.section}: {message}" if self.section else message)

    def record(self, model, key, lookup, values, *, on_create=None, existing=..., update=None):
        """The record named `key` (its natural key) written from `values` unless it was edited.

        lookup: the fields that find it; on_create: fields only a new record takes
        (workflow states such as a task's lifecycle, which a load never moves back);
        existing: the record, when the caller already holds it (None: it is missing);
        update: how to write a changed record, when a plain save is not the rule.
        Returns (record, outcome).
        """
        name = f"{model._meta.label_lower}:{key}"
        self.met.add(name)
        wanted = fields_digest(model, values)
        index, at = self._index(model, lookup)
        record = index.get(at) if existing is ... else existing
        if record is None:
            record = model(**lookup, **values, **(on_create or {}))
            record.save()
            index[at] = record
            outcome = "created"
        else:
            current = record_digest(record, values)
            if current == wanted:
                outcome = "unchanged"
            elif (
                self._loaded.get(name) == current
                or name in self.replace
                or self._never_filled(name, record, values)
            ):
                if update is None:
                    for field, value in values.items():
                        setattr(record, field, value)
                    record.save()
                else:
                    record = update(record, values)
                outcome = "updated"
            else:
                outcome = "kept"
                self.report(self._kept_reason(name))
        self.counts[outcome] += 1
        if outcome != "kept" and self._loaded.get(name) != wanted:
            self._digests[name] = wanted
        return record, outcome

    def _never_filled(self, name, record, values):
        """Whether no load ever wrote these fields and nobody filled them: nothing to keep.
        (A field new to the file, reaching a database loaded before the field was in it.)"""
        meta = record._meta
        return name not in self._loaded and all(
            getattr(record, meta.get_field(field).attname) in (None, "") for field in values
        )

    def _index(self, model, lookup):
        """Every record of the model by its lookup fields, read in one query per load.

        A load visits thousands of records; one query each would cost more than the
        load itself. Returns the index and the lookup's place in it.
        """
        fields = tuple(model._meta.get_field(name) for name in lookup)
        index = self._indexes.get((model, fields))
        if index is None:
            index = {
                tuple(getattr(record, field.attname) for field in fields): record
                for record in model.objects.all()
            }
            self._indexes[(model, fields)] = index
        at = tuple(_comparable_key(lookup[field.name]) for field in fields)
        return index, at

    def _kept_reason(self, name):
        if name in self._loaded:
            why = _("edited since it was loaded")
        else:
            why = _("differs from the file and no load of it is on record")
        return _("kept %(record)s: %(why)s (load with --replace %(record)s to overwrite it)") % {
            "record": name,
            "why": why,
        }

    def finish(self):
        """Refuse replace names no file holds; remember what each written record now holds."""
        unknown = sorted(self.replace - self.met)
        if unknown:
            raise ValidationFailed(
                _("No canonical record to replace is named: %(names)s.")
                % {"names": ", ".join(unknown)}
            )
        now = timezone.now()
        LoadedRecord.objects.bulk_create(
            [LoadedRecord(name=n, digest=d, loaded_at=now) for n, d in self._digests.items()],
            update_conflicts=True,
            unique_fields=["name"],
            update_fields=["digest", "loaded_at"],
        )


def content_load(*, sections=None, replace=(), source=None, progress=lambda percent, message: None):
    """Run the registered loaders (all, or the named sections) in one transaction.

    Returns the report lines: a count per section and every record left alone.
    """
    loaders = settings.CANONICAL_CONTENT_LOADERS
    if sections:
        unknown = sorted(set(sections) - {name for name, _path in loaders})
        if unknown:
            raise ValidationFailed(
                _("Unknown content section: %(names)s. Known sections: %(known)s.")
                % {"names": ", ".join(unknown), "known": ", ".join(content_sections())}
            )
        loaders = [(name, path) for name, path in loaders if name in sections]
    if source and not (Path(source).is_dir() and os.access(source, os.R_OK | os.X_OK)):
        raise ValidationFailed(
            _("%(path)s is not a readable directory. Nothing was loaded.") % {"path": source}
        )
    with transaction.atomic():
        load = CanonicalLoad(replace=replace, source=source)
        for index, (name, dotted_path) in enumerate(loaders):
            load.section = name
            before = Counter(load.counts)
            import_string(dotted_path)(load)
            counts = load.counts - before
            load.report(
                ", ".join(f"{outcome} {counts[outcome]}" for outcome in CanonicalLoad.OUTCOMES)
            )
            progress(round(100 * (index + 1) / len(loaders)), load.reports[-1])
        load.section = ""
        load.finish()
    return load.reports


# ------------------------------------------------------------------ dumping back to YAML
#
# Every app that owns content also registers a dumper in
# settings.CANONICAL_CONTENT_DUMPERS: `dump(directory, report)` writes the section's
# records into `directory` in the file layout and YAML shape its loader reads, and
# its module's CONTENT_DIR names the folder it writes by default.


class Quoted(str):
    """A text written in double quotes."""


class Folded(str):
    """A text written as a folded block (``>-``), wrapped to fit FOLD_WIDTH columns."""


class Flow(list):
    """A list of plain values written on one line: ``[a, b]``."""


class Records(list):
    """A list of records written with a blank line between them."""


LITERAL_WIDTH = 76  # with literal_long_texts, a wider text is written as a literal block
FOLD_WIDTH = 79  # folded lines stay under 80 columns
_RECORDS_TAG = "tag:mica,content:records"
_LINE_BREAKS = "\n\x85\u2028\u2029"


def display_width(text):
    """Columns a text takes in an editor: wide (CJK, Hangul) characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def optional_text_pair(record, field, style=str):
    """The pair, or None when both languages are empty (an optional field of `texts`)."""
    pair = field_pair(record, field, style)
    return pair if any(pair.values()) else None


class _ContentDumper(yaml.SafeDumper):
    """PyYAML's safe dumper with the layout of the content files.

    Records lists get a blank line between items, keys in `blank_before` (top level
    only) a blank line before them; Folded texts are wrapped by display width.
    """

    literal_long_texts = False
    indent_sequences = False
    double_quotes = False
    blank_before = frozenset()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._spaced = []

    def represent_text(self, value):
        style = None
        if isinstance(value, Quoted):
            style = '"'
        elif isinstance(value, Folded):
            style = ">"
        elif self.literal_long_texts and ("\n" in value or display_width(value) > LITERAL_WIDTH):
            style = "|"
        elif self.double_quotes and (
            self.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str"
        ):
            style = '"'
        return self.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)

    def represent_flow(self, value):
        return self.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=True)

    def represent_records(self, value):
        return self.represent_sequence(_RECORDS_TAG, list(value))

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, indentless and not self.indent_sequences)

    def process_tag(self):
        if isinstance(self.event, yaml.CollectionStartEvent) and self.event.tag == _RECORDS_TAG:
            self.prepared_tag = None  # a layout mark, not a type: never written
            return
        super().process_tag()

    def expect_block_sequence(self):
        self._spaced.append(self.event.tag == _RECORDS_TAG)
        super().expect_block_sequence()

    def expect_block_sequence_item(self, first=False):
        if not first and isinstance(self.event, yaml.SequenceEndEvent):
            self._spaced.pop()
        elif not first and self._spaced[-1]:
            self._blank_line()
        super().expect_block_sequence_item(first)

    def expect_block_mapping_key(self, first=False):
        if (
            not first
            and self.indent == 0
            and isinstance(self.event, yaml.ScalarEvent)
            and self.event.value in self.blank_before
        ):
            self._blank_line()
        super().expect_block_mapping_key(first)

    def _blank_line(self):
        if self.column:
            self.write_line_break()
        self.write_line_break()

    def write_folded(self, text):
        """PyYAML's folded writer, folding before a word that would pass FOLD_WIDTH columns.

        It folds only at a single space inside a line that does not start with a
        space (the only places where a line break reads back as that space).
        """
        hints = self.determine_block_hints(text)
        self.write_indicator(">" + hints, True)
        if hints[-1:] == "+":
            self.open_ended = True
        self.write_line_break()
        leading_space = True
        spaces = False
        breaks = True
        start = end = 0
        width = 0  # display columns of the current line
        while end <= len(text):
            char = text[end] if end < len(text) else None
            if breaks:
                if char is None or char not in _LINE_BREAKS:
                    if not leading_space and char is not None and char != " ":
                        if text[start] == "\n":
                            self.write_line_break()
                    leading_space = char == " "
                    for line_break in text[start:end]:
                        if line_break == "\n":
                            self.write_line_break()
                        else:
                            self.write_line_break(line_break)
                    if char is not None:
                        self.write_indent()
                        width = self.column
                    start = end
            elif spaces:
                if char != " ":
                    word_end = end
                    while word_end < len(text) and text[word_end] not in " " + _LINE_BREAKS:
                        word_end += 1
                    fold = (
                        start + 1 == end
                        and not leading_space
                        and width + 1 + display_width(text[end:word_end]) > FOLD_WIDTH
                    )
                    if fold:
                        self.write_indent()
                        width = self.column
                    else:
                        self._write_text(text[start:end])
                        width += end - start
                    start = end
            elif char is None or char in " " + _LINE_BREAKS:
                self._write_text(text[start:end])
                width += display_width(text[start:end])
                if char is None:
                    self.write_line_break()
                start = end
            if char is not None:
                breaks = char in _LINE_BREAKS
                spaces = char == " "
            end += 1

    def _write_text(self, data):
        self.column += len(data)
        self.stream.write(data.encode(self.encoding) if self.encoding else data)


_ContentDumper.add_representer(str, _ContentDumper.represent_text)
_ContentDumper.add_representer(Quoted, _ContentDumper.represent_text)
_ContentDumper.add_representer(Folded, _ContentDumper.represent_text)
_ContentDumper.add_representer(Flow, _ContentDumper.represent_flow)
_ContentDumper.add_representer(Records, _ContentDumper.represent_records)


def _leading_comments(path):
    """The comment lines (and blank lines) a file opens with, or ''."""
    if path is None or not Path(path).is_file():
        return ""
    lines = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip() and not line.lstrip().startswith("#"):
                break
            lines.append(line)
    return "".join(lines)


def dump_yaml(
    data,
    *,
    literal_long_texts=False,
    indent_sequences=False,
    double_quotes=False,
    blank_before=(),
):
    """`data` as YAML in the layout of the content files (block style, unicode, keys in order).

    literal_long_texts: a text wider than LITERAL_WIDTH columns or on several lines
    is a literal block; indent_sequences: "  - item" under its key; double_quotes:
    a text that must be quoted is quoted with "; blank_before: top-level keys that
    get a blank line before them. Quoted, Folded, Flow and Records set the style of
    one value.
    """
    options = {
        "literal_long_texts": literal_long_texts,
        "indent_sequences": indent_sequences,
        "double_quotes": double_quotes,
        "blank_before": frozenset(blank_before),
    }
    dumper = type("ContentDumper", (_ContentDumper,), options)
    return yaml.dump(
        data,
        Dumper=dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=float("inf"),
    )


def write_yaml(path, data, *, header_from=None, **style):
    """Write `data` to `path` (see dump_yaml) after the comments `header_from` opens with."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = _leading_comments(header_from) + dump_yaml(data, **style)
    path.write_text(text, encoding="utf-8")


def _refused(message, **values):
    return ValidationFailed(message % values)


def _check_output(path):
    """Refuse a path that cannot become a writable directory, before anything is written."""
    try:
        if path.exists():
            if not path.is_dir():
                raise _refused(
                    _("%(path)s exists and is not a directory. Nothing was written."), path=path
                )
            directory = path
        else:
            directory = path.parent
            while not directory.exists():
                directory = directory.parent
            if not directory.is_dir():
                raise _refused(
                    _(
                        "%(path)s cannot be created: %(parent)s is not a directory. "
                        "Nothing was written."
                    ),
                    path=path,
                    parent=directory,
                )
    except OSError as error:
        raise _refused(
            _("%(path)s cannot be written: %(error)s. Nothing was written."),
            path=path,
            error=error.strerror or error,
        ) from error
    if not os.access(directory, os.W_OK | os.X_OK):
        raise _refused(_("%(path)s is not writable. Nothing was written."), path=directory)


def _staging_directory(target):
    """A fresh temporary directory beside `target` (or inside it, when only it is writable)."""
    base = target.parent
    while not base.exists():
        base = base.parent
    if not os.access(base, os.W_OK | os.X_OK):
        base = target
    return Path(tempfile.mkdtemp(prefix=f".{target.name}-dump-", dir=base))


def _make_directories(directory, created):
    missing = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir()
        created.append(path)


def _move_in(stages):
    """Move every staged file to its place; on any failure put everything back as it was."""
    moved, created, counts = [], [], []
    destination = stages[0][1] if stages else None
    try:
        for stage, target in stages:
            destination = target
            files = sorted(path for path in (stage / "files").rglob("*") if path.is_file())
            replaced = stage / "replaced"
            replaced.mkdir()
            for number, source in enumerate(files):
                destination = target / source.relative_to(stage / "files")
                _make_directories(destination.parent, created)
                backup = None
                if destination.is_dir():
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), destination)
                if destination.exists() or destination.is_symlink():
                    backup = replaced / str(number)
                    os.replace(destination, backup)
                moved.append((destination, backup))
                os.replace(source, destination)
            counts.append(len(files))
    except BaseException as error:
        for written, backup in reversed(moved):
            with contextlib.suppress(OSError):
                if backup is None:
                    written.unlink(missing_ok=True)
                else:
                    os.replace(backup, written)
        for directory in reversed(created):
            with contextlib.suppress(OSError):
                directory.rmdir()
        if not isinstance(error, OSError):
            raise
        raise _refused(
            _("%(path)s cannot be written: %(error)s. Nothing was written."),
            path=destination,
            error=error.strerror or error,
        ) from error
    return counts


def content_dump_sections():
    return [name for name, _path in settings.CANONICAL_CONTENT_DUMPERS]


def content_dump(*, sections=None, output=None, progress=lambda percent, message: None):
    """Write the current records (all sections, or the named ones) back to YAML.

    Without `output` each section is written into its app's own content/ folder, so
    `git diff` shows what the editors changed; with it, into `output/<section>/`.
    Everything is first written into a temporary directory beside each target and
    only then moved in, so a refusal or a failure leaves every target as it was.
    Files of a target that the dump does not write are left alone. Returns the
    report lines.
    """
    dumpers = settings.CANONICAL_CONTENT_DUMPERS
    if sections:
        unknown = sorted(set(sections) - {name for name, _path in dumpers})
        if unknown:
            raise ValidationFailed(
                _("Unknown content section: %(names)s. Known sections: %(known)s.")
                % {"names": ", ".join(unknown), "known": ", ".join(content_dump_sections())}
            )
        dumpers = [(name, path) for name, path in dumpers if name in sections]
    if output is not None and not str(output).strip():
        raise ValidationFailed(_("Name the directory to write the content into."))
    plan = []
    for name, dotted_path in dumpers:
        dump = import_string(dotted_path)
        if output is None:
            target = Path(importlib.import_module(dump.__module__).CONTENT_DIR)
        else:
            target = Path(output) / name
        plan.append((name, dump, target))
    if output is not None:
        _check_output(Path(output))
    for _name, _dump, target in plan:
        _check_output(target)
    reports, stages = [], []
    try:
        for index, (name, dump, target) in enumerate(plan):
            try:
                stage = _staging_directory(target)
                stages.append((stage, target))
                dump(stage / "files", lambda line, name=name: reports.append(f"{name}: {line}"))
            except OSError as error:
                raise _refused(
                    _("%(path)s cannot be written: %(error)s. Nothing was written."),
                    path=target,
                    error=error.strerror or error,
                ) from error
            progress(round(90 * (index + 1) / len(plan)), reports[-1] if reports else name)
        counts = _move_in(stages)
    finally:
        for stage, _target in stages:
            shutil.rmtree(stage, ignore_errors=True)
    for index, ((name, _dump, target), count) in enumerate(zip(plan, counts, strict=True)):
        reports.append(f"{name}: wrote {count} file{'s' if count != 1 else ''} to {target}")
        progress(90 + round(10 * (index + 1) / len(plan)), reports[-1])
    return reports
