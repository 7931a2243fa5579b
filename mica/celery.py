import os

from celery import Celery

from mica.jobs.broker_files import broker_files_register

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mica.settings")

# The embedded profile's broker of files, whose messages appear whole (mica.jobs.broker_files).
broker_files_register()
app = Celery("mica")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
