"""Tags the page shell needs to say one thing in several places of the head."""

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.utils.safestring import mark_safe

register = template.Library()


class CaptureNode(template.Node):
    # The nodelist is a child nodelist, so {% block %} tags inside it can still be
    # overridden by templates that extend this one.
    child_nodelists = ("nodelist",)

    def __init__(self, nodelist, name):
        self.nodelist = nodelist
        self.name = name

    def render(self, context):
        # Already escaped by the nodes that rendered it.
        context[self.name] = mark_safe(self.nodelist.render(context).strip())
        return ""


@register.tag
def capture(parser, token):
    """{% capture as name %}…{% endcapture %}: render once, use {{ name }} anywhere after.

    A block can be written only once in a template, yet the page title and
    description belong in <title>, the description meta tag and the social
    preview tags alike.
    """
    bits = token.split_contents()
    if len(bits) != 3 or bits[1] != "as":
        raise template.TemplateSyntaxError("usage: {% capture as name %}…{% endcapture %}")
    nodelist = parser.parse(("endcapture",))
    parser.delete_first_token()
    return CaptureNode(nodelist, bits[2])


@register.simple_tag
def absolute_static(path):
    """The absolute URL of a static file, as link previews need it.

    Built from settings.SITE_URL, never from the request: the Host header is the
    client's to choose, and a cached page would pass it on to every later reader.
    """
    url = static(path)
    if url.startswith(("http://", "https://")):
        return url
    return settings.SITE_URL + url
