"""What the admin's own templates need from the site."""

from django import template

from mica.site.work_queues import work_queues as queues_of

register = template.Library()


@register.simple_tag(takes_context=True)
def work_queues(context):
    return queues_of(context["request"].user)
