import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")

app = Celery("mica")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
