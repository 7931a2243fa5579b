from django.contrib import admin

from submissions import models


@admin.register(models.System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "operator", "operator_account")
    search_fields = ("name", "slug", "operator")


@admin.register(models.SystemSnapshot)
class SystemSnapshotAdmin(admin.ModelAdmin):
    """A snapshot is immutable: a change is a new snapshot, never an edit."""

    list_display = ("system", "version", "snapshot_date", "track", "data_status")
    list_filter = ("track", "data_status")
    list_select_related = ("system",)

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        return [field.name for field in obj._meta.fields]

    def has_delete_permission(self, request, obj=None):
        return False


class InvocationInline(admin.TabularInline):
    model = models.ModelInvocation
    extra = 0
    can_delete = False

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(models.Attempt)
class AttemptAdmin(admin.ModelAdmin):
    """Attempts arrive through ingestion only, where every rule is checked."""

    list_display = (
        "attempt_id",
        "snapshot",
        "market",
        "family",
        "outcome",
        "eligible",
        "invalid_reason",
        "verification",
    )
    list_filter = ("market", "family", "outcome", "eligible", "verification", "data_status")
    search_fields = ("attempt_id",)
    list_select_related = ("snapshot__system", "market", "family")
    inlines = [InvocationInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
