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
