"""The admin's banner of system problems (mica.site.health), for staff on every page."""

from django import template

from mica.site.health import system_problems_recent

register = template.Library()


@register.simple_tag(takes_context=True)
def system_problems(context):
    request = context.get("request")
    user = getattr(request, "user", None)
    if not getattr(user, "is_staff", False):
        return []
    return system_problems_recent()
