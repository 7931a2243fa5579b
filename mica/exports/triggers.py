"""Content changes queue a debounced export regeneration once their transaction commits."""

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save

# The apps whose records the exports are made of.
WATCHED_APPS = {"methodology", "catalogue", "markets", "governance", "submissions"}
# Records that change often and never reach an export.
IGNORED_MODELS = {"outboxmessage", "personaldeclaration", "historicaltaskversion"}


def _watched(model):
    meta = model._meta
    return meta.app_label in WATCHED_APPS and meta.model_name not in IGNORED_MODELS


def _after_commit():
    from mica.exports.services import exports_request_debounced

    exports_request_debounced()


def content_changed(sender, **kwargs):
    if not settings.EXPORTS_ON_CHANGE or not _watched(sender):
        return
    # One callback per transaction, however many rows it writes.
    connection = transaction.get_connection()
    if any(entry[1] is _after_commit for entry in connection.run_on_commit):
        return
    transaction.on_commit(_after_commit)


def connect():
    post_save.connect(content_changed, dispatch_uid="exports-content-saved")
    post_delete.connect(content_changed, dispatch_uid="exports-content-deleted")
