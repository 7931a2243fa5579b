from django.db import models
from django.utils.translation import gettext_lazy as _


class ContentRevision(models.Model):
    """One row: moves on every committed change to the content, and keys the page cache.

    It lives in the database, not in the cache, because every web worker must see
    the same number at once, and the embedded profile's cache is per process.
    """

    number = models.PositiveBigIntegerField(_("number"), default=0)
    changed_at = models.DateTimeField(_("changed at"))

    class Meta:
        verbose_name = _("content revision")
        verbose_name_plural = _("content revisions")

    def __str__(self):
        return f"{self.number} ({self.changed_at:%Y-%m-%d %H:%M:%S})"
