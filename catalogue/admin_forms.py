"""The task version's change form: its structured fields as widgets, never JSON text."""

from django import forms
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from catalogue.models import ContractClause, MarketApplicability, TaskVersion
from catalogue.services import REVIEW_ANCHOR_FIELDS
from mica.admin_fields import CodeListField
from mica.bilingual import LANGUAGES
from mica.methodology.selectors import edition_current, section_outline
from mica.vocabulary import DiagnosticAxis, EvidenceType, LocalityCondition

# The kinds of parameter catalogue.instances draws values for, and what each needs.
RANGE_TYPES = ("integer", "date-offset-days", "money")
CHOICE_TYPES = ("choice", "text")
PARAMETER_TYPES = [
    ("integer", _("Whole number in a range")),
    ("date-offset-days", _("Days from the task start, in a range")),
    ("money", _("Amount in the market's currency, in a range")),
    ("choice", _("One of listed values")),
    ("text", _("One of listed texts")),
]
EXTRA_ROWS = 2
ROW_FIELDS = ("name", "type", "choices", "min", "max", "description_en", "description_ko")


def _row_of(parameter):
    """A stored parameter as the strings its row of the editor shows."""
    description = parameter.get("description") or {}
    return {
        "name": parameter.get("name", ""),
        "type": parameter.get("type", ""),
        "choices": "\n".join(str(choice) for choice in parameter.get("choices", [])),
        "min": "" if parameter.get("min") is None else str(parameter["min"]),
        "max": "" if parameter.get("max") is None else str(parameter["max"]),
        **{f"description_{lang}": description.get(lang, "") for lang in LANGUAGES},
        "delete": False,
    }


class ParameterListWidget(forms.Widget):
    """One group of inputs per parameter, two empty groups to add more, a box to remove one.

    Works without JavaScript: the rows posted are read back by their number.
    """

    template_name = "admin/catalogue/widgets/parameters.html"
    use_fieldset = True

    def format_value(self, value):
        rows = [row if "delete" in row else _row_of(row) for row in (value or [])]
        return rows + [_row_of({}) for _ in range(EXTRA_ROWS)]

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        widget = context["widget"]
        widget["types"] = PARAMETER_TYPES
        widget["rows"] = [
            {**row, "prefix": f"{name}-{index}", "id": f"{widget['attrs']['id']}-{index}"}
            for index, row in enumerate(widget["value"])
        ]
        return context

    def render(self, name, value, attrs=None, renderer=None):
        # The project's templates, which the default form renderer does not search.
        return mark_safe(render_to_string(self.template_name, self.get_context(name, value, attrs)))

    def value_from_datadict(self, data, files, name):
        try:
            total = int(data.get(f"{name}-TOTAL", 0))
        except (TypeError, ValueError):
            total = 0
        rows = []
        for index in range(min(total, 200)):
            prefix = f"{name}-{index}-"
            row = {field: (data.get(prefix + field) or "").strip() for field in ROW_FIELDS}
            row["choices"] = (data.get(prefix + "choices") or "").strip()
            row["delete"] = bool(data.get(prefix + "delete"))
            rows.append(row)
        return rows

    def value_omitted_from_data(self, data, files, name):
        return f"{name}-TOTAL" not in data


def _whole(text, refusal, errors):
    try:
        return int(text)
    except ValueError:
        errors.append(refusal)
        return None


def _parameter(row):
    """The stored form of one row, or ValidationError naming what is wrong with it."""
    name = row["name"] or "?"
    errors = []
    try:
        forms.SlugField().clean(row["name"])
    except ValidationError:
        errors.append(_("Give the parameter a name of letters, digits, _ or -."))
    kind = row["type"]
    if kind not in dict(PARAMETER_TYPES):
        errors.append(_("Choose the kind of the parameter."))
    parameter = {"name": row["name"], "type": kind}
    if kind in CHOICE_TYPES:
        choices = [line.strip() for line in row["choices"].splitlines() if line.strip()]
        if not choices:
            errors.append(_("List at least one value, one a line."))
        parameter["choices"] = choices
    if kind in RANGE_TYPES:
        if not (row["min"] and row["max"]):
            errors.append(_("Give the lowest and the highest value."))
        else:
            low = _whole(row["min"], _("The lowest value must be a whole number."), errors)
            high = _whole(row["max"], _("The highest value must be a whole number."), errors)
            if low is not None and high is not None and low > high:
                errors.append(_("The lowest value is above the highest."))
            parameter.update({"min": low, "max": high})
    description = {lang: row[f"description_{lang}"] for lang in LANGUAGES}
    if not all(description.values()):
        errors.append(_("Describe the parameter in English and in Korean."))
    parameter["description"] = description
    if errors:
        raise ValidationError(
            [_("Parameter %(name)s: %(error)s") % {"name": name, "error": e} for e in errors]
        )
    return parameter


class ParameterListField(forms.Field):
    """The parameter schema: what varies between instances of a task, and how."""

    widget = ParameterListWidget

    def clean(self, value):
        rows = [
            row
            for row in value or []
            if not row.get("delete") and any(row.get(field) for field in ROW_FIELDS)
        ]
        parameters, errors = [], []
        for row in rows:
            try:
                parameters.append(_parameter(row))
            except ValidationError as wrong:
                errors.extend(wrong.messages)
        names = [parameter["name"] for parameter in parameters]
        for repeated in sorted({n for n in names if names.count(n) > 1}):
            errors.append(_("Two parameters are named %(name)s.") % {"name": repeated})
        if errors:
            raise ValidationError(errors)
        return parameters

    def has_changed(self, initial, data):
        try:
            return self.clean(data) != (initial or [])
        except ValidationError:
            return True


class TaskVersionAdminForm(forms.ModelForm):
    """Evidence, axes and locality as ticked vocabulary; parameters as a row each. The
    admin names the model and the fields (TaskVersionAdmin)."""

    evidence_requirements = CodeListField(
        vocabulary=EvidenceType.choices, label=capfirst(_("evidence requirements"))
    )
    diagnostic_axes = CodeListField(
        vocabulary=DiagnosticAxis.choices, label=capfirst(_("diagnostic axes")), required=False
    )
    locality_conditions = CodeListField(
        vocabulary=LocalityCondition.choices,
        label=capfirst(_("locality conditions")),
        required=False,
    )
    parameter_schema = ParameterListField(label=capfirst(_("parameters")), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("evidence_requirements", "diagnostic_axes", "locality_conditions"):
            self.fields[name].keep(getattr(self.instance, name, None))


# --- What a review comment is about ---------------------------------------------------

# The parts of a version that are not one of its fields, named as the version's page
# names them.
PART_LABELS = {
    "clauses": ContractClause._meta.verbose_name_plural,
    "applicability": MarketApplicability._meta.verbose_name_plural,
    "references": _("speed and cost references"),
}


def review_anchor_fields():
    """(anchor, label) of each part of a task version a comment can be about."""
    return [
        (name, capfirst(PART_LABELS.get(name) or TaskVersion._meta.get_field(name).verbose_name))
        for name in REVIEW_ANCHOR_FIELDS
    ]


def review_anchor_choices():
    """The list a comment's anchor is chosen from: the version's parts, then every
    section of the current edition, grouped as the methodology reads."""
    return [
        ("", "---------"),
        (_("Parts of the task version"), review_anchor_fields()),
        *section_outline(edition_current()),
    ]


def review_anchor_labels():
    """{anchor: how a person reads it}: the part's name, or the section's words and id."""
    return {
        value: label for _group, options in review_anchor_choices()[1:] for value, label in options
    }


class ReviewAnchorField(forms.ChoiceField):
    """Chosen from a list; whether the choice is allowed is the rule of the service that
    writes the comment (catalogue.services.review_anchor_error), which this field leaves
    to it rather than judging a second time."""

    def __init__(self, **kwargs):
        super().__init__(choices=review_anchor_choices, **kwargs)

    def valid_value(self, value):
        return True
