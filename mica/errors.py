"""Domain errors. Services raise these; the API and admin map them to responses.

Each carries a message already translated (or lazily translatable) into the
user's language, so whoever catches it can show it as it is.
"""

from django.http import Http404


class DomainError(Exception):
    """A rule of the method refused the operation."""

    status_code = 400

    def __init__(self, message, *, field_errors=None):
        super().__init__(message)
        self.message = message
        self.field_errors = field_errors or {}


class ValidationFailed(DomainError):
    status_code = 400


class PermissionRefused(DomainError):
    status_code = 403


class InvalidTransition(DomainError):
    status_code = 409


class AppendOnly(DomainError):
    """A record that is evidence was asked to change or go: it never does."""

    status_code = 409


class Conflict(DomainError):
    """The request contradicts what is already on record (an idempotency key reused
    for a different body, say)."""

    status_code = 409


class RecordNotFound(Http404):
    """A 404 that says which kind of record is missing, for the 404 page to show.

    The general 404 text speaks of pages and editions; a missing challenge or
    task deserves a sentence about challenges or tasks. The texts never echo the
    address asked for, and say the same whether the record is absent or private.
    """

    def __init__(self, heading, explanation, *, link_url="", link_label=""):
        super().__init__(heading)
        self.heading = heading
        self.explanation = explanation
        self.link_url = link_url
        self.link_label = link_label
