from django.db import models
from django.utils.translation import gettext_lazy as _


class EditionStatus(models.TextChoices):
    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")
    SUPERSEDED = "superseded", _("Superseded")


class Edition(models.Model):
    """One version of the method. Everything the portal publishes belongs to one."""

    slug = models.SlugField(_("slug"), max_length=40, unique=True)
    version_label = models.CharField(_("version label"), max_length=80)
    status = models.CharField(
        _("status"), max_length=12, choices=EditionStatus.choices, default=EditionStatus.DRAFT
    )
    published_on = models.DateField(_("published on"), null=True, blank=True)

    class Meta:
        ordering = ["-published_on", "-pk"]
        verbose_name = _("edition")
        verbose_name_plural = _("editions")

    def __str__(self):
        return self.version_label
