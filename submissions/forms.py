from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from submissions.challenges import MAX_CITATIONS, MAX_TEXT, ChallengeSerializer

# Formatted as each page is rendered, in its reader's language (a `%` here would fix
# the English text once, as the module is imported).
TEXT_HELP = format_lazy(_("Plain text, at most {n} characters."), n=f"{MAX_TEXT:,}")

# The challenge schema lives once, in ChallengeSerializer: the form takes each field's
# type, length, bounds, choices and whether it is required from there, and adds only
# what a person filling it in needs (labels, widgets, help).
SCHEMA = ChallengeSerializer().fields
SCORING_SCHEMA = SCHEMA["scoring_inputs"].fields


def schema_field(schema, *, label, widget=None, help_text=""):
    """A form field with the constraints of the serializer field `schema`."""
    common = {"label": label, "required": schema.required, "help_text": help_text}
    if widget is not None:
        common["widget"] = widget
    if isinstance(schema, serializers.ChoiceField):
        choices = list(schema.choices.items())
        return forms.ChoiceField(
            choices=choices if schema.required else [("", "—"), *choices], **common
        )
    if isinstance(schema, serializers.EmailField):
        return forms.EmailField(max_length=schema.max_length, **common)
    if isinstance(schema, serializers.SlugField):
        return forms.SlugField(max_length=schema.max_length, **common)
    if isinstance(schema, serializers.CharField):
        return forms.CharField(max_length=schema.max_length, **common)
    if isinstance(schema, serializers.IntegerField):
        return forms.IntegerField(min_value=schema.min_value, max_value=schema.max_value, **common)
    if isinstance(schema, serializers.DecimalField):
        return forms.DecimalField(
            min_value=schema.min_value,
            max_digits=schema.max_digits,
            decimal_places=schema.decimal_places,
            **common,
        )
    if isinstance(schema, serializers.FloatField):
        return forms.FloatField(min_value=schema.min_value, max_value=schema.max_value, **common)
    raise TypeError(f"no form field for {type(schema).__name__}")


def scoring_field(name, *, label):
    """A scoring input: optional on the form, since only a scoring challenge gives them."""
    field = schema_field(SCORING_SCHEMA[name], label=label)
    field.required = False
    return field


def _textarea(rows):
    return forms.Textarea(attrs={"rows": rows})


class ChallengeForm(forms.Form):
    """The public challenge form; the service checks every rule, this only shapes the input."""

    section_id = schema_field(SCHEMA["section_id"], label=_("Section id"))
    challenge_type = schema_field(SCHEMA["challenge_type"], label=_("Type of challenge"))
    what_is_wrong = schema_field(
        SCHEMA["what_is_wrong"], label=_("What is wrong"), widget=_textarea(5), help_text=TEXT_HELP
    )
    proposed_replacement = schema_field(
        SCHEMA["proposed_replacement"],
        label=_("What should replace it"),
        widget=_textarea(5),
        help_text=TEXT_HELP,
    )
    # Citations are a list in the schema; here one per line, parsed by payload().
    citations = forms.CharField(
        label=_("Citations (method)"),
        required=False,
        widget=_textarea(3),
        help_text=format_lazy(
            _(
                "One per line: a URL or DOI, a space, and the date you accessed it "
                "(YYYY-MM-DD). At most {n}."
            ),
            n=MAX_CITATIONS,
        ),
    )
    counter_example = schema_field(
        SCHEMA["counter_example"], label=_("Worked counter-example (method)"), widget=_textarea(3)
    )
    market = schema_field(SCHEMA["market"], label=_("Market (locality)"))
    channel = schema_field(SCHEMA["channel"], label=_("Channel (locality)"))
    convention = schema_field(
        SCHEMA["convention"],
        label=_("Convention the method misdescribes (locality)"),
        widget=_textarea(3),
    )
    situation_id = schema_field(SCHEMA["situation_id"], label=_("Situation id, if any (locality)"))
    eligible_runs = scoring_field("eligible_runs", label=_("Eligible runs (scoring)"))
    successes = scoring_field("successes", label=_("Successes (scoring)"))
    success_latencies = forms.CharField(
        label=_("Latencies of successful runs in seconds (scoring)"),
        required=False,
        help_text=_("Comma-separated numbers."),
    )
    total_cost_usd = scoring_field(
        "total_cost_usd", label=_("Total eligible cost in USD (scoring)")
    )
    claimed_metric = schema_field(
        SCHEMA["claimed_metric"], label=_("Figure you computed (scoring)")
    )
    claimed_value = schema_field(SCHEMA["claimed_value"], label=_("Its value (scoring)"))
    contact_email = schema_field(
        SCHEMA["contact_email"],
        label=_("Contact e-mail"),
        help_text=_(
            "Never published. We send a link to confirm it before anyone screens the challenge."
        ),
    )
    public_name = schema_field(SCHEMA["public_name"], label=_("Public name (optional)"))
    # A field people never see: a value means a robot filled the form.
    website = forms.CharField(
        required=False,
        label=_("Leave this empty"),
        widget=forms.TextInput(attrs={"autocomplete": "off", "tabindex": "-1"}),
    )

    def payload(self, edition_slug, language, idempotency_key):
        data = self.cleaned_data
        payload = {
            key: data[key]
            for key in (
                "section_id",
                "challenge_type",
                "what_is_wrong",
                "proposed_replacement",
                "counter_example",
                "channel",
                "convention",
                "situation_id",
                "contact_email",
                "public_name",
            )
            if data.get(key)
        }
        payload.update(edition=edition_slug, language=language, idempotency_key=idempotency_key)
        if data.get("market"):
            payload["market"] = data["market"]
        payload["citations"] = _citations(data.get("citations", ""))
        if not payload["citations"]:
            payload.pop("citations")
        if data.get("eligible_runs") is not None:
            payload["scoring_inputs"] = {
                "eligible_runs": data["eligible_runs"],
                "successes": data.get("successes") or 0,
                "success_latencies_seconds": _numbers(data.get("success_latencies", "")),
                "total_cost_usd": str(data.get("total_cost_usd") or 0),
            }
        if data.get("claimed_metric"):
            payload["claimed_metric"] = data["claimed_metric"]
        if data.get("claimed_value") is not None:
            payload["claimed_value"] = data["claimed_value"]
        return payload


def _citations(text):
    citations = []
    for line in text.splitlines():
        parts = line.strip().rsplit(" ", 1)
        if len(parts) == 2:
            citations.append({"source": parts[0], "accessed": parts[1]})
        elif line.strip():
            citations.append({"source": line.strip(), "accessed": ""})
    return citations


def _numbers(text):
    values = []
    for part in text.split(","):
        part = part.strip()
        if part:
            try:
                values.append(float(part))
            except ValueError:
                values.append(part)  # the service names the bad value
    return values


def _lines(text):
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class SystemSubmissionForm(forms.Form):
    name = forms.CharField(label=_("System name"), max_length=120)
    operator = forms.CharField(label=_("Operator"), max_length=120)
    version = forms.CharField(label=_("Version"), max_length=60)
    snapshot_date = forms.DateField(label=_("Snapshot date (YYYY-MM-DD)"))
    orchestrator = forms.CharField(label=_("Orchestrator"), max_length=200)
    routable_models = forms.CharField(
        label=_("Every routable model, one per line"), widget=forms.Textarea(attrs={"rows": 3})
    )
    tools = forms.CharField(
        label=_("Tools and APIs, one per line"), widget=forms.Textarea(attrs={"rows": 3})
    )
    memory = forms.CharField(
        label=_("Memory behaviour"), widget=forms.Textarea(attrs={"rows": 3}), max_length=MAX_TEXT
    )
    markets = forms.MultipleChoiceField(
        label=_("Markets in scope"), widget=forms.CheckboxSelectMultiple, choices=()
    )
    families = forms.MultipleChoiceField(
        label=_("Task families in scope"), widget=forms.CheckboxSelectMultiple, choices=()
    )
    access = forms.CharField(
        label=_("Access"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_TEXT,
        help_text=_(
            "How MICA-controlled accounts reach the system. Never send secrets, tokens or codes."
        ),
    )
    evidence_plan = forms.CharField(
        label=_("Evidence-trace plan"),
        max_length=MAX_TEXT,
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    contact_email = forms.EmailField(label=_("Contact e-mail"))

    def __init__(self, *args, markets=(), families=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["markets"].choices = [(m.code, f"{m.code} · {m.name}") for m in markets]
        self.fields["families"].choices = [(f.slug, f.label) for f in families]

    def payload(self):
        data = dict(self.cleaned_data)
        data["routable_models"] = _lines(data["routable_models"])
        data["tools"] = _lines(data["tools"])
        data["snapshot_date"] = data["snapshot_date"].isoformat()
        return data
