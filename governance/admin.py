from django.contrib import admin

from governance.models import GateCell


@admin.register(GateCell)
class GateCellAdmin(admin.ModelAdmin):
    """Derived from the attempts by the gate; read here, never typed in."""

    list_display = (
        "__str__",
        "eligible_runs",
        "successes",
        "accuracy",
        "blockers",
        "publication_eligible",
        "computed_at",
    )
    list_filter = ("publication_eligible", "data_status", "verification", "market", "family")
    list_select_related = ("snapshot__system", "market", "family")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
