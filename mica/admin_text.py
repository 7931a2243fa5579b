"""Read-only columns of the admin that show what people and machines wrote, as written.

A challenger's text, an appeal's grounds, a staff member's reason or an e-mail as it was
sent are words in the language they were written in, not interface text: the admin
shows them with that language marked (lang="en", or lang="" where it is not known), so
a browser, a screen reader and the Korean crawl read them as such. Structured values
(JSON) are shown as code.
"""

import json

from django.contrib import admin
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html


def as_written(text, language=""):
    """`text` with its language marked; an em dash for nothing."""
    if text in (None, ""):
        return "—"
    return format_html('<div lang="{}">{}</div>', language, linebreaksbr(text))


def written_field(name, description, language_of=None):
    """A column (for list_display or readonly_fields) showing the field `name` of a
    record as written, in the language `language_of(record)` names (else unknown)."""

    @admin.display(description=description)
    def shown(modeladmin, obj):
        language = language_of(obj) if language_of else ""
        return as_written(getattr(obj, name), language)

    shown.__name__ = f"{name}_as_written"
    return shown


def structured_field(name, description):
    """A column showing a JSON field of a record as the code it is."""

    @admin.display(description=description)
    def shown(modeladmin, obj):
        value = getattr(obj, name)
        if value in (None, "", [], {}):
            return "—"
        text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
        return format_html('<pre class="structured" translate="no">{}</pre>', text)

    shown.__name__ = f"{name}_as_data"
    return shown
