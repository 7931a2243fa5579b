from django.db import models
from django.utils.translation import gettext_lazy as _

from mica.errors import AppendOnly


class TableRevision(models.Model):
    """How often one table's content has changed: moves after every commit that wrote it.

    Cached pages are keyed by the revisions of the tables they read
    (mica.content.page_cache), so a change invalidates exactly the pages that show
    it. It lives in the database, not in the cache, because every web worker must
    see the same number at once, and the embedded profile's cache is per process.
    """

    table_name = models.CharField(_("table"), max_length=63, primary_key=True)
    number = models.PositiveBigIntegerField(_("number"), default=0)
    changed_at = models.DateTimeField(_("changed at"))

    class Meta:
        verbose_name = _("table revision")
        verbose_name_plural = _("table revisions")

    def __str__(self):
        return f"{self.table_name} {self.number} ({self.changed_at:%Y-%m-%d %H:%M:%S})"


class RowChange(models.Model):
    """A commit wrote a row of a scoped table (mica.content.rows): the key of the page it
    belongs to, or an empty key where the commit did not say which rows (the whole table
    moved).
    Kept until every build made before it is replaced."""

    number = models.PositiveBigIntegerField(_("content revision"), db_index=True)
    table_name = models.CharField(_("table"), max_length=63)
    key = models.CharField(_("key"), max_length=255, blank=True)

    class Meta:
        verbose_name = _("row change")
        verbose_name_plural = _("row changes")

    def __str__(self):
        return f"{self.number} {self.table_name} {self.key}"


class LoadedRecord(models.Model):
    """What the canonical content loader last wrote into one record.

    The digest covers only the fields the loader writes, as they read back from
    the database. A record whose fields no longer match it was edited since, and a
    later load leaves it alone: once content exists, the database is the source of
    truth, not the YAML.
    """

    name = models.CharField(_("record"), max_length=255, unique=True)
    digest = models.CharField(_("digest of the loaded fields"), max_length=64)
    loaded_at = models.DateTimeField(_("loaded at"))

    class Meta:
        db_table = "site_loadedrecord"  # made when the site app held it
        verbose_name = _("loaded canonical record")
        verbose_name_plural = _("loaded canonical records")

    def __str__(self):
        return self.name


class PublishedBuild(models.Model):
    """One build of published files (the export set, the baked pages), as stored in the
    build store (mica.content.builds): every file by its SHA-256, and what readers learn of it
    without the files."""

    kind = models.CharField(_("kind"), max_length=20)
    name = models.CharField(_("name"), max_length=120, unique=True)
    # The content revision (revision.GLOBAL) read before the build began: publication
    # never moves a pointer back to a build made from older content.
    revision = models.PositiveBigIntegerField(_("content revision"))
    files = models.JSONField(_("files"), default=dict)
    summary = models.JSONField(_("summary"), default=dict)
    # What each file was made of (mica.content.builds.build_made_with, the revisions, the
    # tables each file read): a later build takes the files whose tables have not moved.
    reads = models.JSONField(_("what it read"), default=dict)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("published build")
        verbose_name_plural = _("published builds")

    def __str__(self):
        return f"{self.kind} {self.name}"


class PublishedPointer(models.Model):
    """Which build of a kind readers are served: publication moves this row, nothing else."""

    kind = models.CharField(_("kind"), max_length=20, primary_key=True)
    build = models.ForeignKey(
        PublishedBuild, on_delete=models.PROTECT, verbose_name=_("published build")
    )
    moved_at = models.DateTimeField(_("moved at"), auto_now=True)

    class Meta:
        verbose_name = _("published pointer")
        verbose_name_plural = _("published pointers")

    def __str__(self):
        return f"{self.kind} -> {self.build.name}"


class PublicationKind(models.TextChoices):
    EXPORTS = "exports", _("Export set")
    BAKE = "bake", _("Baked pages")
    EDITION = "edition", _("Edition")
    KEY_ROTATION = "key-rotation", _("Key rotation")
    HOLDOUT_REVEAL = "holdout-reveal", _("Holdout reveal")


class PublicationLogEntry(models.Model):
    """One publication (an export set, a bake, an edition, a key rotation), chained to the
    entry before it by its digest and signed with the site's key (mica.publication_chain
    holds the rules, mica.content.publication_log appends).

    Append-only: the model refuses a second save or a delete, and triggers refuse UPDATE and
    DELETE to any SQL on both databases."""

    sequence = models.PositiveBigIntegerField(_("sequence"), unique=True)
    at = models.DateTimeField(_("at"))
    kind = models.CharField(_("kind"), max_length=20, choices=PublicationKind.choices)
    subject = models.JSONField(_("what was published"), default=dict)
    previous_digest = models.CharField(_("digest of the previous entry"), max_length=64)
    digest = models.CharField(_("digest"), max_length=64, unique=True)
    key_id = models.CharField(_("key id"), max_length=16)
    # The signer's public key (raw, base64), kept so that every node serves the same key
    # from the database; not signed itself: key_id, which is, names it.
    public_key = models.CharField(_("public key"), max_length=64)
    signature = models.CharField(_("signature"), max_length=100)

    class Meta:
        ordering = ["sequence"]
        verbose_name = _("publication log entry")
        verbose_name_plural = _("publication log entries")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(sequence__gte=1), name="publication_log_sequence_from_one"
            )
        ]

    def __str__(self):
        return f"{self.sequence} {self.kind}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise AppendOnly(_("A publication log entry is never changed."))
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnly(_("A publication log entry is never deleted."))
