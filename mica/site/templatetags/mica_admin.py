"""What the admin's own templates need from the site."""

from django import template

from mica.history import translated_fields
from mica.site.work_queues import work_queues as queues_of

register = template.Library()


@register.simple_tag(takes_context=True)
def work_queues(context):
    return queues_of(context["request"].user)


@register.filter
def text_language(field):
    """The language of a read-only field's text: "en" or "ko" for a translated field's
    column (title_en, title_ko), else "" (interface text, in the page's language)."""
    name = field.field.get("name") if isinstance(field.field, dict) else None
    model = field.form._meta.model
    if not isinstance(name, str) or model is None:
        return ""
    base, _sep, language = name.rpartition("_")
    if language in ("en", "ko") and base in translated_fields(model):
        return language
    return ""
