import unicodedata


def plain(text):
    """Unicode-normalized plain text; it is rendered escaped, never as HTML."""
    return unicodedata.normalize("NFC", text or "").strip()
