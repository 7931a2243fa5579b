from django.contrib import admin, messages
from django.http import HttpResponseRedirect

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
            request.decision_refused = True
            messages.error(request, refused.message)

    def log_change(self, request, obj, message):
        if getattr(request, "decision_refused", False):
            return None  # nothing changed: the history must not say otherwise
        return super().log_change(request, obj, message)

    def response_change(self, request, obj):
        """A refused decision goes back to the form with its refusal alone, never beside a
        "changed successfully"."""
        if getattr(request, "decision_refused", False):
            return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)
