"""A published edition is immutable: every save of it or of its records is refused.

Checked on the ORM's pre_save and pre_delete, so admin, API, commands and shell all meet
the same refusal. Only the status may move on (published -> superseded).
"""

from django.db.models.signals import pre_delete, pre_save
from django.dispatch import receiver
from django.utils.translation import gettext as _

from mica.errors import ValidationFailed
from mica.methodology import models


def _refuse(edition):
    raise ValidationFailed(
        _("Edition %(edition)s is published and cannot change; changes go into a new edition.")
        % {"edition": edition}
    )


@receiver(pre_save, sender=models.Edition)
def _edition_frozen(sender, instance, **kwargs):
    if instance.pk is None:
        return
    stored = models.Edition.objects.filter(pk=instance.pk).first()
    if stored is None or stored.status == models.EditionStatus.DRAFT:
        return
    frozen = [f.attname for f in sender._meta.concrete_fields if f.attname != "status"]
    if any(getattr(stored, name) != getattr(instance, name) for name in frozen):
        _refuse(stored)


def _record_frozen(sender, instance, **kwargs):
    edition = models.Edition.objects.filter(pk=instance.edition_id).only("status").first()
    if edition is not None and edition.status != models.EditionStatus.DRAFT:
        _refuse(edition)


for _model in models.SECTION_MODELS:
    pre_save.connect(_record_frozen, sender=_model, dispatch_uid=f"frozen-{_model.__name__}")
    pre_delete.connect(
        _record_frozen, sender=_model, dispatch_uid=f"frozen-delete-{_model.__name__}"
    )
