from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """mapping[key] in a template, or None."""
    return mapping.get(key) if mapping else None
