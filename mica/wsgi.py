import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")
django_application = get_wsgi_application()

# Imported once Django is set up: the layer reads the settings and the content revisions.
from mica.site.baked import BakedPages  # noqa: E402

# Anonymous readers of the public pages are answered from the published bake.
application = BakedPages(django_application)
