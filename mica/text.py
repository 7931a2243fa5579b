import unicodedata

from django.utils.functional import lazy


def plain(text):
    """Unicode-normalized plain text; it is rendered escaped, never as HTML."""
    return unicodedata.normalize("NFC", text or "").strip()


def _interpolate(message, params):
    return str(message) % params


# `gettext_lazy(...) % params` translates at once; this waits until the text is read, so
# one message can be stored in every language (a job's progress, say).
lazy_format = lazy(lambda message, **params: _interpolate(message, params), str)
