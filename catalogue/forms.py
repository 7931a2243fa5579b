from django import forms
from django.utils.translation import gettext_lazy as _

from catalogue.models import Complexity, Lifecycle, TaskSurface, TerminationClass
from markets.selectors import market_list


def _with_any(choices):
    return [("", _("Any"))] + list(choices)


class TaskFilterForm(forms.Form):
    """The catalogue's GET filters. A value that is not valid is dropped, never an error."""

    family = forms.ChoiceField(label=_("Family"), required=False)
    market = forms.ChoiceField(label=_("Market"), required=False)
    surface = forms.ChoiceField(
        label=_("Surface"), required=False, choices=_with_any(TaskSurface.choices)
    )
    termination_class = forms.ChoiceField(
        label=_("Termination class"), required=False, choices=_with_any(TerminationClass.choices)
    )
    complexity = forms.ChoiceField(
        label=_("Complexity"), required=False, choices=_with_any(Complexity.choices)
    )
    lifecycle = forms.ChoiceField(
        label=_("Lifecycle"), required=False, choices=_with_any(Lifecycle.choices)
    )

    def __init__(self, data, *, families, initial=None):
        super().__init__(data, initial=initial)
        self.fields["family"].choices = _with_any((f.slug, f.label) for f in families)
        self.fields["market"].choices = _with_any(
            (m.code, f"{m.code} · {m.name}") for m in market_list()
        )

    def filters(self):
        """The valid filters only; anything else falls back to "any"."""
        self.is_valid()
        return {
            name: self.cleaned_data.get(name) or None
            for name in self.fields
            if name not in self.errors
        }
