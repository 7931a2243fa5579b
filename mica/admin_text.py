"""Read-only columns of the admin that show what people and machines wrote, as written.

A challenger's text, an appeal's grounds, a staff member's reason or an e-mail as it was
sent are words in the language they were written in, not interface text: the admin
shows them with that language marked (lang="en", or lang="" where it is not known), so
a browser, a screen reader and the Korean crawl read them as such. Structured values
(JSON) are shown as a definition list in the reader's language: each known key by its
label, the values as written.
"""

from django.contrib import admin
from django.template.defaultfilters import linebreaksbr
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


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


# The keys of the structured values the admin shows (a challenge's evidence and recompute,
# a system submission's declarations), by their labels; any other key (a market's code,
# say) is shown as the code it is.
STRUCTURED_KEYS = {
    "counter_example": _("Worked counter-example"),
    "market": _("Market"),
    "channel": _("Channel"),
    "convention": _("Convention"),
    "situation_id": _("Situation id"),
    "claimed_metric": _("Figure computed"),
    "claimed_value": _("Its value"),
    "citations": _("Citations"),
    "source": _("Source"),
    "accessed": _("Accessed on"),
    "scoring_inputs": _("Scoring inputs"),
    "eligible_runs": _("Eligible runs"),
    "successes": _("Successes"),
    "success_latencies_seconds": _("Latencies of successful runs (s)"),
    "total_cost_usd": _("Total eligible cost (USD)"),
    "metric": _("Figure"),
    "recomputed": _("Recomputed"),
    "claimed": _("Claimed"),
    "reproduced": _("Reproduced"),
    "method": _("Computation method"),
}


def _key(key):
    label = STRUCTURED_KEYS.get(key)
    if label is None:
        return format_html('<code translate="no">{}</code>', key)
    return format_html("{}", label)


def readable(value):
    """A JSON value as a reader reads it: a mapping as a definition list, a list as a
    list, yes or no for a truth value, an em dash for nothing, text as written."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return gettext("Yes") if value else gettext("No")
    if isinstance(value, dict):
        rows = format_html_join(
            "", "<dt>{}</dt><dd>{}</dd>", ((_key(k), readable(v)) for k, v in value.items())
        )
        return format_html('<dl class="structured">{}</dl>', rows)
    if isinstance(value, list | tuple):
        items = format_html_join("", "<li>{}</li>", ((readable(item),) for item in value))
        return format_html('<ul class="structured">{}</ul>', items)
    if isinstance(value, int | float):
        return str(value)
    return format_html('<span lang="">{}</span>', value)


def structured_field(name, description):
    """A column showing a JSON field of a record readably (readable), never as raw JSON."""

    @admin.display(description=description)
    def shown(modeladmin, obj):
        value = getattr(obj, name)
        if value in (None, "", [], {}):
            return "—"
        return readable(value)

    shown.__name__ = f"{name}_as_data"
    return shown
