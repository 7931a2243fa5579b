"""The admin of records that move through a workflow: decisions taken from a form, and
their events read as a person reads them (actions, states and roles in words, never
their codes; a person's reason marked as their own words)."""

from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from django.utils.timezone import localtime
from django.utils.translation import gettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from mica.errors import DomainError
from mica.workflows import decision_label, event_role_label, state_labels, workflow_actions


def event_reason(event):
    """A reason the portal wrote, in the reader's language; a person's words as written,
    marked as being in a language the page does not know."""
    if not event.reason:
        return "—"
    if getattr(event, "written_by_portal", False):
        return gettext(event.reason)
    return format_html('<span lang="">{}</span>', event.reason)


class DecisionAdmin(admin.ModelAdmin):
    """Saving the change form applies the chosen decision through the service, never a
    direct field write; a refusal is shown in the editor's language.

    The form's "decision" field names every decision in words; the workflow's table
    (`transitions`) decides which of them the record's state offers, and only those
    whose role is staff's (`decision_roles`; None: every role).
    """

    transitions = {}
    decision_roles = None

    def has_add_permission(self, request):
        return False

    @admin.display(description=_("decisions"))
    def decision_events(self, obj):
        """The record's events, oldest first, in words."""
        states = state_labels(type(obj))
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    decision_label(event.action),
                    states.get(event.from_state, event.from_state) or "—",
                    states.get(event.to_state, event.to_state),
                    event_role_label(event.role),
                    event_reason(event),
                    date_format(localtime(event.at), "DATETIME_FORMAT"),
                )
                for event in obj.events.all()
            ),
        )
        if not rows:
            return _("No decision yet.")
        head = format_html(
            "<tr><th scope='col'>{}</th><th scope='col'>{}</th><th scope='col'>{}</th>"
            "<th scope='col'>{}</th><th scope='col'>{}</th></tr>",
            _("action"),
            _("state"),
            _("deciding role"),
            _("reason"),
            _("at"),
        )
        return format_html("<table>{}{}</table>", head, rows)

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is None or "decision" not in form.base_fields:
            return form
        labels = dict(form.base_fields["decision"].choices)
        offered = [
            action
            for action in workflow_actions(self.transitions, obj.state)
            if self.decision_roles is None
            or self.transitions[(obj.state, action)].role in self.decision_roles
        ]
        choices = [("", labels.get("", "—")), *((a, labels[a]) for a in offered if a in labels)]

        class OfferedDecisions(form):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.fields["decision"].choices = choices

        return OfferedDecisions

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


class DecisionEventInline(admin.TabularInline):
    """A record's decisions, as its workflow wrote them: read, never edited; each column
    in words (the codes stay in the database and the API)."""

    extra = 0
    can_delete = False
    readonly_fields = ("decision", "state_before", "state_after", "deciding_role", "why", "at")
    fields = readonly_fields

    def _state(self, code):
        if not hasattr(self, "_states"):
            self._states = state_labels(self.parent_model)
        return self._states.get(code, code) or "—"

    @admin.display(description=_("action"))
    def decision(self, event):
        return decision_label(event.action)

    @admin.display(description=pgettext_lazy("state", "from"))
    def state_before(self, event):
        return self._state(event.from_state)

    @admin.display(description=pgettext_lazy("state", "to"))
    def state_after(self, event):
        return self._state(event.to_state)

    @admin.display(description=_("deciding role"))
    def deciding_role(self, event):
        return event_role_label(event.role)

    @admin.display(description=_("reason"))
    def why(self, event):
        return event_reason(event)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
