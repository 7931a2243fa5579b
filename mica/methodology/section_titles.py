"""A section named as a reader knows it: by its record's title in the reader's language,
not by its section id. E-mail subjects and feed titles name a challenged or corrected
section this way ("New MICA challenge #1 on “Gaps the benchmark can measure”"), the id
staying in the links and the data.
"""

from django.utils.text import Truncator

from mica.methodology.models import Edition
from mica.methodology.selectors import section_record_get

# The fields that title a section's record, by kind (chapter, claim, reference, term ...).
TITLE_FIELDS = ("title", "term", "label")
LONGEST = 80  # characters of a title in a subject line


def section_record(edition, section_id):
    """The record behind `section_id` in `edition` (an Edition or its slug), or None."""
    if isinstance(edition, str):
        edition = Edition.objects.filter(slug=edition).first()
    if edition is None or not section_id:
        return None
    return section_record_get(edition, section_id)


def section_name(record, section_id):
    """The record's title in the active language, quoted; its id when it has none."""
    for field in TITLE_FIELDS:
        title = getattr(record, field, None) if record is not None else None
        if title:
            return f"“{Truncator(' '.join(str(title).split())).chars(LONGEST)}”"
    return section_id
