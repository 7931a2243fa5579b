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
        return f"{self.action}: {self.from_state} → {self.to_state}"

    @property
    def role_label(self):
        return decision_role_label(self.role)
