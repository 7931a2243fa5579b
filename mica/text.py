import re
import unicodedata

from django.utils.functional import lazy

# Characters that show nothing (zero-width space, non-joiner and joiner, word joiner,
# byte-order mark): text of these and whitespace alone says nothing, so it is blank.
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_EDGES = re.compile(f"^[\\s{ZERO_WIDTH}]+|[\\s{ZERO_WIDTH}]+$")


def plain(text):
    """Unicode-normalized plain text without blank edges (Unicode whitespace and
    zero-width characters); it is rendered escaped, never as HTML."""
    return _EDGES.sub("", unicodedata.normalize("NFC", text or ""))


def is_blank(text):
    """Whether `text` says nothing once whitespace and zero-width characters are gone."""
    return not plain(text)


def _interpolate(message, params):
    return str(message) % params


# `gettext_lazy(...) % params` translates at once; this waits until the text is read, so
# one message can be stored in every language (a job's progress, say).
lazy_format = lazy(lambda message, **params: _interpolate(message, params), str)
