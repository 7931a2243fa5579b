from django import forms
from django.utils.translation import gettext_lazy as _

from submissions.challenges import MARKETS, MAX_CITATIONS, MAX_TEXT, SCORING_METRICS
from submissions.models import ChallengeType

TEXT_HELP = _("Plain text, at most %(n)s characters.") % {"n": f"{MAX_TEXT:,}"}


class ChallengeForm(forms.Form):
    """The public challenge form; the service checks every rule, this only shapes the input."""

    section_id = forms.SlugField(label=_("Section id"), max_length=120)
    challenge_type = forms.ChoiceField(label=_("Type of challenge"), choices=ChallengeType.choices)
    what_is_wrong = forms.CharField(
        label=_("What is wrong"),
        widget=forms.Textarea(attrs={"rows": 5}),
        max_length=MAX_TEXT,
        help_text=TEXT_HELP,
    )
    proposed_replacement = forms.CharField(
        label=_("What should replace it"),
        widget=forms.Textarea(attrs={"rows": 5}),
        max_length=MAX_TEXT,
        help_text=TEXT_HELP,
    )
    citations = forms.CharField(
        label=_("Citations (method)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "One per line: a URL or DOI, a space, and the date you accessed it "
            "(YYYY-MM-DD). At most %(n)s."
        )
        % {"n": MAX_CITATIONS},
    )
    counter_example = forms.CharField(
        label=_("Worked counter-example (method)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_TEXT,
    )
    market = forms.ChoiceField(
        label=_("Market (locality)"),
        required=False,
        choices=[("", "—")] + [(m, m) for m in MARKETS],
    )
    channel = forms.CharField(label=_("Channel (locality)"), required=False, max_length=300)
    convention = forms.CharField(
        label=_("Convention the method misdescribes (locality)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=MAX_TEXT,
    )
    situation_id = forms.CharField(
        label=_("Situation id, if any (locality)"), required=False, max_length=80
    )
    eligible_runs = forms.IntegerField(
        label=_("Eligible runs (scoring)"), required=False, min_value=0
    )
    successes = forms.IntegerField(label=_("Successes (scoring)"), required=False, min_value=0)
    success_latencies = forms.CharField(
        label=_("Latencies of successful runs in seconds (scoring)"),
        required=False,
        help_text=_("Comma-separated numbers."),
    )
    total_cost_usd = forms.DecimalField(
        label=_("Total eligible cost in USD (scoring)"),
        required=False,
        min_value=0,
        max_digits=14,
        decimal_places=6,
    )
    claimed_metric = forms.ChoiceField(
        label=_("Figure you computed (scoring)"),
        required=False,
        choices=[("", "—")] + [(m, m) for m in SCORING_METRICS],
    )
    claimed_value = forms.FloatField(label=_("Its value (scoring)"), required=False)
    contact_email = forms.EmailField(
        label=_("Contact e-mail"),
        help_text=_(
            "Never published. We send a link to confirm it before anyone screens the challenge."
        ),
    )
    public_name = forms.CharField(label=_("Public name (optional)"), required=False, max_length=80)
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
