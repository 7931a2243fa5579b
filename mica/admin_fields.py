"""Form fields for structured values the admin edits as widgets, never as JSON text."""

from django import forms

# The admin's autocomplete, then what names its comboboxes for assistive technology: the
# Media of an admin with autocomplete_fields (the order makes ours run after Django's).
AUTOCOMPLETE_JS = [
    "admin/js/jquery.init.js",
    "admin/js/autocomplete.js",
    "mica/admin-autocomplete.js",
]


class CodeListField(forms.MultipleChoiceField):
    """A JSON list of vocabulary codes, edited as checkboxes.

    The stored order means something (the first evidence named is the one looked for
    first), and the content hash a review approves covers it: codes kept stay where they
    were and new ones follow in the vocabulary's order, so saving an unchanged form
    changes nothing. A stored code the vocabulary no longer offers stays offered, and
    kept, until someone unticks it.
    """

    widget = forms.CheckboxSelectMultiple

    def __init__(self, *, vocabulary, **kwargs):
        self.vocabulary = list(vocabulary)
        super().__init__(choices=self.vocabulary, **kwargs)
        self.stored = []

    def keep(self, stored):
        """Called by the form with the record's list before it is bound."""
        self.stored = list(stored or [])
        known = {code for code, _label in self.vocabulary}
        self.choices = self.vocabulary + [(code, code) for code in self.stored if code not in known]

    def clean(self, value):
        chosen = super().clean(value)
        kept = [code for code in self.stored if code in chosen]
        return kept + [code for code in chosen if code not in kept]
