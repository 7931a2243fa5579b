"""Paths in two languages: English unprefixed, Korean under /ko/."""

import re

from django.utils.http import escape_leading_slashes

ENGLISH_PREFIX_RE = re.compile(r"^/en(?:/(?P<rest>.*))?$", re.DOTALL)
KOREAN_PREFIX_RE = re.compile(r"^/ko(?:/|$)")

LANGUAGE_PATH_PREFIX = {"en": "", "ko": "/ko"}


def logical_path(path):
    """The path without its language prefix: the same page in any language."""
    if KOREAN_PREFIX_RE.match(path):
        return path[3:] or "/"
    return path


def localized_path(path, language):
    return escape_leading_slashes(LANGUAGE_PATH_PREFIX[language] + logical_path(path))
