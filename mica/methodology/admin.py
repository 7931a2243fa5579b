from django.contrib import admin
from modeltranslation.admin import TranslationAdmin

from mica.methodology.models import Edition


@admin.register(Edition)
class EditionAdmin(TranslationAdmin):
    list_display = ("version_label", "slug", "status", "published_on")
    list_filter = ("status",)
    search_fields = ("slug", "version_label_en", "version_label_ko")
