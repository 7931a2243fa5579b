from django.utils import timezone
from django.utils.translation import gettext as _

from governance.models import Correction
from mica.errors import ValidationFailed


def correction_record(*, challenge, text_en, text_ko):
    """Record the correction an accepted challenge makes, in both languages."""
    if not (text_en or "").strip() or not (text_ko or "").strip():
        raise ValidationFailed(
            _("Accepting a challenge needs the correction in English and Korean."),
            field_errors={"correction": [_("Write the correction in both languages.")]},
        )
    return Correction.objects.create(
        edition=challenge.edition,
        section_id=challenge.section_id,
        challenge=challenge,
        text_en=text_en.strip(),
        text_ko=text_ko.strip(),
        decided_on=timezone.localdate(),
    )


def disclosure_supersede(*, key, changes):
    """A changed statement is a new one superseding the current; the old stays as history."""
    from django.db import transaction

    from governance.models import DisclosureStatement

    with transaction.atomic():
        current = DisclosureStatement.objects.select_for_update().get(
            key=key, superseded_at__isnull=True
        )
        fields = {
            f.attname: getattr(current, f.attname)
            for f in current._meta.concrete_fields
            if f.name not in ("id", "supersedes", "superseded_at", "created_at")
        }
        fields.update(changes)
        current.superseded_at = timezone.now()
        current.save(update_fields=["superseded_at"])
        return DisclosureStatement.objects.create(**fields, supersedes=current)
