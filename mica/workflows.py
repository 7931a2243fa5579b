"""One workflow idiom: a table of (state, action) -> Move, and an event row per decision.

Local review, challenges, appeals, system submissions and job runs each declare
such a table; their one transition function locks the row, reads the move here,
checks the role it names, moves the state and writes an append-only event in the
same transaction. The admin offers exactly the actions the table allows.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from mica.errors import InvalidTransition

# The roles a public decision record names (never the person), in the reader's words.
DECISION_ROLES = {
    "challenger": pgettext_lazy("deciding role", "challenger"),
    "editor": pgettext_lazy("deciding role", "editor"),
    "method-lead": pgettext_lazy("deciding role", "method lead"),
    "staff": pgettext_lazy("deciding role", "staff"),
    "public": pgettext_lazy("deciding role", "public"),
}


def decision_role_label(role):
    return DECISION_ROLES.get(role, role)


# Every action an event records, across the workflows, as a person names it: the events'
# tables and names read them for every app above.
DECISION_ACTIONS = {
    "file": pgettext_lazy("decision", "filed"),
    "screen": pgettext_lazy("decision", "screened"),
    "triage": pgettext_lazy("decision", "triaged"),
    "accept": pgettext_lazy("decision", "accepted"),
    "hold": pgettext_lazy("decision", "held"),
    "reject": pgettext_lazy("decision", "rejected"),
    "withdraw": pgettext_lazy("decision", "withdrawn"),
    "uphold": pgettext_lazy("decision", "upheld"),
    "dismiss": pgettext_lazy("decision", "dismissed"),
    "decline": pgettext_lazy("decision", "declined"),
    "report": pgettext_lazy("decision", "reported"),
    "submit": pgettext_lazy("decision", "submitted for review"),
    "request_changes": pgettext_lazy("decision", "changes requested"),
    "approve": pgettext_lazy("decision", "approved"),
    "void": pgettext_lazy("decision", "voided"),
    "resubmit": pgettext_lazy("decision", "resubmitted for review"),
    "promote": pgettext_lazy("decision", "promoted to validated"),
    "make_current": pgettext_lazy("decision", "made current"),
    "retire": pgettext_lazy("decision", "retired"),
    "invalidate": pgettext_lazy("decision", "invalidated"),
    "reverse": pgettext_lazy("decision", "invalidation reversed"),
}
# Roles only the admin's events name (the public records name DECISION_ROLES).
EVENT_ROLES = {
    "author": pgettext_lazy("deciding role", "author"),
    "reviewer": pgettext_lazy("deciding role", "reviewer"),
    "system": pgettext_lazy("deciding role", "the portal"),
}


def decision_label(action):
    return DECISION_ACTIONS.get(action, action)


def event_role_label(role):
    return EVENT_ROLES.get(role) or decision_role_label(role)


def state_labels(model):
    """{code: label} of every state a record of `model` may be in (its fields with
    choices: a review's state, a task's lifecycle)."""
    labels = {}
    for field in model._meta.concrete_fields:
        if field.choices:
            labels.update({str(code): label for code, label in field.flatchoices})
    return labels


@dataclass(frozen=True)
class Move:
    """Where an action takes a record, and the role that may take it."""

    target: str
    role: str


def workflow_move(table, state, action, refusal):
    """The move of `action` from `state`, or InvalidTransition with `refusal`."""
    move = table.get((state, action))
    if move is None:
        raise InvalidTransition(refusal)
    return move


def workflow_actions(table, state):
    """The actions the table allows from `state`, in the table's order."""
    return [action for (source, action) in table if source == state]


class DecisionEvent(models.Model):
    """Append-only: one row for each decision, with its reason, the deciding role and when."""

    action = models.CharField(_("action"), max_length=20)
    from_state = models.CharField(_("from"), max_length=20)
    to_state = models.CharField(_("to"), max_length=20)
    role = models.CharField(_("deciding role"), max_length=20)
    # Kept private: a public record names the role, never the person.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("decided by"),
    )
    reason = models.TextField(_("reason"), blank=True)
    at = models.DateTimeField(_("at"), auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["at", "pk"]

    def __str__(self):
        states = state_labels(self.record_model())
        moved = [states.get(code, code) for code in (self.from_state, self.to_state)]
        return f"{decision_label(self.action)}: {moved[0] or '—'} → {moved[1]}"

    @classmethod
    def record_model(cls):
        """The model of the record whose decisions these are (the first of its foreign
        keys that is not the person who decided)."""
        for field in cls._meta.concrete_fields:
            if field.many_to_one and field.name != "actor":
                return field.related_model
        return cls

    @property
    def role_label(self):
        return decision_role_label(self.role)
