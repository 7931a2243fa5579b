"""Canonical content: readable YAML in each app's content/ folder, loaded idempotently.

Every app that owns content registers a loader in settings.CANONICAL_CONTENT_LOADERS.
A loader takes a `report(message)` callable and writes its records with
update_or_create, so running it twice changes nothing.
"""

import yaml
from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _

from mica.errors import ValidationFailed

LANGUAGES = ("en", "ko")


def read_yaml(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def translated(item, field):
    """{'title': {'en': .., 'ko': ..}} -> {'title_en': .., 'title_ko': ..}; both required."""
    values = item.get(field) or {}
    missing = [lang for lang in LANGUAGES if not values.get(lang)]
    if missing:
        raise ValidationFailed(
            _("Content field %(field)s has no text in: %(languages)s.")
            % {"field": field, "languages": ", ".join(missing)}
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


def content_load(*, sections=None, progress=lambda percent, message: None):
    """Run the registered loaders (all, or the named sections) in one transaction."""
    loaders = settings.CANONICAL_CONTENT_LOADERS
    if sections:
        unknown = sorted(set(sections) - {name for name, _path in loaders})
        if unknown:
            raise ValidationFailed(
                _("Unknown content section: %(names)s. Known sections: %(known)s.")
                % {"names": ", ".join(unknown), "known": ", ".join(content_sections())}
            )
        loaders = [(name, path) for name, path in loaders if name in sections]
    reports = []
    with transaction.atomic():
        for index, (name, dotted_path) in enumerate(loaders):
            loader = import_string(dotted_path)
            loader(lambda message, name=name: reports.append(f"{name}: {message}"))
            progress(round(100 * (index + 1) / len(loaders)), reports[-1] if reports else name)
    return reports
