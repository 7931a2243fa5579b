from django.contrib import admin, messages

from mica.errors import DomainError


class DecisionAdmin(admin.ModelAdmin):
    """Saving the change form applies the chosen decision through the service, never a
    direct field write; a refusal is shown in the editor's language."""

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        decision = form.cleaned_data.get("decision")
        if not decision:
            return
        try:
            self.decide(request, obj, decision, form.cleaned_data)
        except DomainError as refused:
            messages.error(request, refused.message)
