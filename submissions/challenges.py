"""Challenges to the method: intake with typed evidence, the workflow, and scoring recomputes."""

import hashlib
import uuid
from urllib.parse import urlencode

from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from markets.models import IntegrationSituation
from mica import scoring
from mica.bilingual import LANGUAGES
from mica.content.changes import writes_not_public
from mica.errors import Conflict, PermissionRefused, ValidationFailed
from mica.jobs.services import job_run_enqueue
from mica.methodology.models import Edition
from mica.methodology.selectors import section_record_get
from mica.text import plain
from mica.vocabulary import MARKET_ORDER
from mica.workflows import Move, workflow_move
from submissions.models import (
    FILED_REASON,
    PUBLIC_CHALLENGE_STATES,
    Challenge,
    ChallengeEvent,
    ChallengeState,
    ChallengeType,
    ScoringMetric,
)
from submissions.outbox import (
    notify_claim_owners,
    notify_confirmed,
    notify_editors_of_arrival,
    notify_state_change,
)
from submissions.signals import challenge_accepted
from submissions.throttle import email_normalised

MAX_TEXT = 20_000
MAX_CITATIONS = 20
CONFIRMATION_SALT = "mica.challenge.confirm"
CONFIRMATION_MAX_AGE = 7 * 24 * 3600
FILED_SALT = "mica.challenge.filed"
APPEAL_SALT = "mica.challenge.appeal"
SCORING_METRICS = ScoringMetric.values


class CitationSerializer(serializers.Serializer):
    source = serializers.CharField(max_length=500, help_text=gettext_lazy("URL or DOI"))
    accessed = serializers.DateField(
        help_text=gettext_lazy("The date the source was read, YYYY-MM-DD.")
    )

    def validate_source(self, value):
        value = plain(value)
        if not (value.startswith(("https://", "http://", "doi:")) or value.startswith("10.")):
            raise serializers.ValidationError(_("Give a URL (https://…) or a DOI (10.…)."))
        return value


class ScoringInputsSerializer(serializers.Serializer):
    eligible_runs = serializers.IntegerField(
        min_value=0,
        max_value=10**9,
        help_text=gettext_lazy("The eligible runs the figure is computed from."),
    )
    successes = serializers.IntegerField(
        min_value=0,
        max_value=10**9,
        help_text=gettext_lazy("How many of them were confirmed successes."),
    )
    success_latencies_seconds = serializers.ListField(
        child=serializers.FloatField(min_value=0, max_value=10**7),
        max_length=10_000,
        default=list,
        help_text=gettext_lazy("The latency of each successful run, in seconds."),
    )
    total_cost_usd = serializers.DecimalField(
        max_digits=14,
        decimal_places=6,
        min_value=0,
        help_text=gettext_lazy("The total cost of the eligible runs, in USD."),
    )

    def validate(self, data):
        if data["successes"] > data["eligible_runs"]:
            raise serializers.ValidationError(
                {"successes": _("Successes cannot exceed eligible runs.")}
            )
        return data


def request_language():
    """The language the filer reads: the request's, else English. A filing's receipt and
    its e-mails follow it (Accept-Language on the API, the page's language on the form)."""
    language = translation.get_language() or ""
    return language if language in LANGUAGES else "en"


class ChallengeSerializer(serializers.Serializer):
    """One challenge as filed; the evidence fields required depend on its type."""

    edition = serializers.RegexField(
        r"^[a-z0-9.-]{1,40}$",
        help_text=gettext_lazy("The id of the edition challenged, such as preview-0.1."),
    )
    section_id = serializers.SlugField(
        max_length=120,
        help_text=gettext_lazy(
            "The section id of the challenged claim, as the methodology shows it."
        ),
    )
    challenge_type = serializers.ChoiceField(
        choices=ChallengeType.choices,
        help_text=gettext_lazy("The kind of challenge; each kind needs its own evidence."),
    )
    what_is_wrong = serializers.CharField(
        max_length=MAX_TEXT, help_text=gettext_lazy("What the claim gets wrong, in plain text.")
    )
    proposed_replacement = serializers.CharField(
        max_length=MAX_TEXT, help_text=gettext_lazy("What should replace it, in plain text.")
    )
    citations = CitationSerializer(
        many=True,
        required=False,
        max_length=MAX_CITATIONS,
        help_text=gettext_lazy(
            "Sources for a method challenge: a URL or DOI with its access date."
        ),
    )
    counter_example = serializers.CharField(
        max_length=MAX_TEXT,
        required=False,
        allow_blank=True,
        help_text=gettext_lazy(
            "A worked counter-example, for a method challenge without a citation."
        ),
    )
    market = serializers.ChoiceField(
        choices=MARKET_ORDER,
        required=False,
        help_text=gettext_lazy("For a locality challenge: the market the convention lives in."),
    )
    channel = serializers.CharField(
        max_length=300,
        required=False,
        allow_blank=True,
        help_text=gettext_lazy("For a locality challenge: the channel the convention lives on."),
    )
    convention = serializers.CharField(
        max_length=MAX_TEXT,
        required=False,
        allow_blank=True,
        help_text=gettext_lazy("For a locality challenge: the convention the method misdescribes."),
    )
    situation_id = serializers.SlugField(
        max_length=80,
        required=False,
        allow_blank=True,
        help_text=gettext_lazy(
            "For a locality challenge: the integration situation concerned, if any."
        ),
    )
    scoring_inputs = ScoringInputsSerializer(
        required=False,
        help_text=gettext_lazy(
            "For a scoring challenge: the inputs, which the portal recomputes itself."
        ),
    )
    claimed_metric = serializers.ChoiceField(
        choices=ScoringMetric.choices,
        required=False,
        help_text=gettext_lazy("For a scoring challenge: which figure you computed."),
    )
    claimed_value = serializers.FloatField(
        required=False,
        min_value=-(10**9),
        max_value=10**9,
        help_text=gettext_lazy("For a scoring challenge: the figure you computed."),
    )
    contact_email = serializers.EmailField(
        max_length=254,
        help_text=gettext_lazy(
            "Where the confirmation link and the decisions are sent; never published."
        ),
    )
    public_name = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        help_text=gettext_lazy("The name shown with the challenge in the public register, if any."),
    )
    language = serializers.ChoiceField(
        choices=LANGUAGES,
        default=request_language,
        help_text=gettext_lazy(
            "The language of the e-mails and of the challenge's text: en or ko; by default "
            "the request's."
        ),
    )
    idempotency_key = serializers.CharField(
        max_length=64,
        required=False,
        help_text=gettext_lazy(
            "Your key for this filing: sending it again with the same challenge files nothing new."
        ),
    )

    def validate(self, data):
        errors = {}
        edition = Edition.objects.filter(slug=data["edition"]).first()
        if edition is None:
            errors["edition"] = [_("No edition with this id exists.")]
        elif section_record_get(edition, data["section_id"]) is None:
            errors["section_id"] = [
                _("Section %(id)s does not exist in edition %(edition)s.")
                % {"id": data["section_id"], "edition": edition}
            ]
        errors.update(TYPE_RULES[data["challenge_type"]](data))
        if errors:
            raise serializers.ValidationError(errors)
        data["edition_record"] = edition
        return data


def _method_rules(data):
    if not data.get("citations") and not plain(data.get("counter_example")):
        return {
            "citations": [
                _(
                    "A method challenge needs a citation (URL or DOI with its "
                    "access date) or a worked counter-example."
                )
            ]
        }
    return {}


def _locality_rules(data):
    errors = {}
    for name, message in [
        ("market", _("Name the market.")),
        ("channel", _("Name the channel the convention lives on.")),
        ("convention", _("Describe the convention the method misdescribes.")),
    ]:
        if not plain(data.get(name)):
            errors[name] = [message]
    situation = plain(data.get("situation_id"))
    if situation and data.get("market"):
        known = IntegrationSituation.objects.filter(
            situation_id=situation, market_edition__market__code=data["market"]
        ).exists()
        if not known:
            errors["situation_id"] = [
                _("Situation %(id)s is not in the profile of %(market)s.")
                % {"id": situation, "market": data["market"]}
            ]
    return errors


def _scoring_rules(data):
    errors = {}
    if not data.get("scoring_inputs"):
        errors["scoring_inputs"] = [
            _(
                "A scoring challenge needs the inputs: eligible runs, "
                "successes, latencies and costs."
            )
        ]
    if not data.get("claimed_metric") or data.get("claimed_value") is None:
        errors["claimed_value"] = [_("Give the figure you computed and which one it is.")]
    return errors


TYPE_RULES = {
    ChallengeType.METHOD: _method_rules,
    ChallengeType.LOCALITY: _locality_rules,
    ChallengeType.SCORING: _scoring_rules,
    ChallengeType.EDITORIAL: lambda data: {},
    ChallengeType.DISCLOSURE: lambda data: {},
}


def _evidence(data):
    keys = [
        "counter_example",
        "market",
        "channel",
        "convention",
        "situation_id",
        "claimed_metric",
        "claimed_value",
    ]
    evidence = {
        key: plain(data[key]) if isinstance(data.get(key), str) else data[key]
        for key in keys
        if data.get(key) not in (None, "")
    }
    if data.get("citations"):
        evidence["citations"] = [
            {"source": c["source"], "accessed": c["accessed"].isoformat()}
            for c in data["citations"]
        ]
    if data.get("scoring_inputs"):
        inputs = data["scoring_inputs"]
        evidence["scoring_inputs"] = {**inputs, "total_cost_usd": str(inputs["total_cost_usd"])}
    return evidence


def challenge_filer(email):
    """Whose filing this is, as the idempotency key is scoped: the normalised contact
    e-mail, hashed (the address itself is kept once, on the challenge)."""
    return hashlib.sha256(email_normalised(email).encode()).hexdigest()


def _replayed(existing, fields):
    """The record a retry asks for, or a refusal when the key came with another body."""
    if any(getattr(existing, name) != value for name, value in fields.items()):
        raise Conflict(
            _(
                "This idempotency key was already used for a different challenge. "
                "Send a new key to file another challenge."
            ),
            field_errors={
                "idempotency_key": [_("Already used for a challenge with other content.")]
            },
        )
    return existing, False


def challenge_file(*, payload):
    """Validate and store a challenge (received, private); (challenge, created).

    Re-sending the same idempotency key with the same challenge stores nothing new. A
    key belongs to its filer (the contact e-mail): another filer's identical key files
    their own challenge, and the same filer's key with other content is refused (409).
    """
    serializer = ChallengeSerializer(data=payload)
    if not serializer.is_valid():
        raise ValidationFailed(_("The challenge was not filed."), field_errors=serializer.errors)
    data = serializer.validated_data
    key = data.get("idempotency_key") or uuid.uuid4().hex
    filer = challenge_filer(data["contact_email"])
    fields = {
        "edition_id": data["edition_record"].pk,
        "section_id": data["section_id"],
        "challenge_type": data["challenge_type"],
        "what_is_wrong": plain(data["what_is_wrong"]),
        "proposed_replacement": plain(data["proposed_replacement"]),
        "evidence": _evidence(data),
        "contact_email": data["contact_email"].lower(),
        "public_name": plain(data.get("public_name")),
        "language": data["language"],
    }
    on_record = Challenge.objects.filter(filer=filer, idempotency_key=key)
    existing = on_record.first()
    if existing is not None:
        return _replayed(existing, fields)
    try:
        # Not public until screened: no reader's page changes (mica.content.changes).
        with transaction.atomic(), writes_not_public():
            challenge = Challenge.objects.create(**fields, filer=filer, idempotency_key=key)
            ChallengeEvent.objects.create(
                challenge=challenge,
                action="file",
                from_state="",
                to_state=ChallengeState.RECEIVED,
                role="challenger",
                reason=FILED_REASON,
            )
    except IntegrityError:
        return _replayed(on_record.get(), fields)
    # Within the app: the task module imports this one as it loads.
    from submissions.tasks import challenge_confirmation, recompute_scoring_challenge

    challenge_confirmation(challenge)
    notify_editors_of_arrival(challenge)
    if challenge.challenge_type == ChallengeType.SCORING:
        job_run_enqueue(task=recompute_scoring_challenge, arguments={"challenge_id": challenge.pk})
    return challenge, True


# --- Confirmation -----------------------------------------------------------------


def confirmation_token(challenge):
    return signing.dumps({"challenge": challenge.pk}, salt=CONFIRMATION_SALT)


def appeal_token(challenge):
    """The challenger's key to the one appeal a decision allows: mailed with the decision,
    it names this challenge, and only a request that carries it may file the appeal."""
    return signing.dumps({"challenge": challenge.pk}, salt=APPEAL_SALT)


def filed_receipt_url(challenge):
    """Where the form sends its filer: the receipt page, with the reference signed so
    that only the filer's own redirect names a number."""
    token = signing.dumps(challenge.pk, salt=FILED_SALT)
    return f"{reverse('submissions:challenge-filed')}?{urlencode({'ref': token})}"


def filed_reference(token):
    """The reference number the receipt link carries, or None for no or a forged link."""
    try:
        return int(signing.loads(token, salt=FILED_SALT, max_age=CONFIRMATION_MAX_AGE))
    except (signing.BadSignature, TypeError, ValueError):
        return None


def challenge_confirm(*, token):
    """Confirm the contact address through the signed, expiring link."""
    try:
        data = signing.loads(token, salt=CONFIRMATION_SALT, max_age=CONFIRMATION_MAX_AGE)
    except signing.BadSignature as bad:
        raise ValidationFailed(_("This confirmation link is not valid or has expired.")) from bad
    challenge = Challenge.objects.filter(pk=data.get("challenge")).first()
    if challenge is None:
        raise ValidationFailed(_("This confirmation link is not valid or has expired."))
    if challenge.email_confirmed_at is None:
        _challenge_update(challenge.pk, email_confirmed_at=timezone.now())
        notify_confirmed(challenge)
    return challenge


def _challenge_update(pk, **values):
    """Update a challenge; only a challenge the public sees moves the page revision.

    The state is checked in the statement itself, so a challenge screened meanwhile
    takes the ordinary path.
    """
    with writes_not_public():
        private = Challenge.objects.filter(pk=pk).exclude(state__in=PUBLIC_CHALLENGE_STATES)
        if private.update(**values):
            return
    Challenge.objects.filter(pk=pk).update(**values)


# --- Scoring recompute --------------------------------------------------------------


def recompute_figure(metric, inputs):
    """The figure the method gives for these inputs, computed with mica.scoring."""
    latencies = inputs.get("success_latencies_seconds", [])
    if metric == "accuracy":
        return scoring.accuracy(inputs["successes"], inputs["eligible_runs"])
    if metric == "cost-per-success":
        return scoring.cost_per_success(float(inputs["total_cost_usd"]), inputs["successes"])
    if metric == "p50-latency":
        return scoring.percentile(latencies, 0.5)
    return scoring.percentile(latencies, 0.95)


def challenge_recompute(*, challenge_id):
    """Attach the recomputed figure to a scoring challenge: reproduced, or both values."""
    challenge = Challenge.objects.get(pk=challenge_id)
    evidence = challenge.evidence
    if challenge.challenge_type != ChallengeType.SCORING or "scoring_inputs" not in evidence:
        return None
    value = recompute_figure(evidence["claimed_metric"], evidence["scoring_inputs"])
    claimed = evidence["claimed_value"]
    reproduced = value is not None and abs(value - claimed) <= 1e-6 * max(1.0, abs(value))
    result = {
        "metric": evidence["claimed_metric"],
        "recomputed": value,
        "claimed": claimed,
        "reproduced": reproduced,
        "method": scoring.PERCENTILE_METHOD
        if "latency" in evidence["claimed_metric"]
        else "mica.scoring",
    }
    _challenge_update(challenge_id, recompute=result)
    return result


# --- Workflow -------------------------------------------------------------------------

S = ChallengeState
CHALLENGE_TRANSITIONS = {
    (S.RECEIVED, "screen"): Move(S.SCREENED, "editor"),
    (S.SCREENED, "triage"): Move(S.TRIAGED, "editor"),
    (S.TRIAGED, "accept"): Move(S.ACCEPTED, "method-lead"),
    (S.TRIAGED, "hold"): Move(S.HELD, "method-lead"),
    (S.TRIAGED, "reject"): Move(S.REJECTED, "method-lead"),
    (S.RECEIVED, "withdraw"): Move(S.WITHDRAWN, "challenger"),
    (S.SCREENED, "withdraw"): Move(S.WITHDRAWN, "challenger"),
    (S.TRIAGED, "withdraw"): Move(S.WITHDRAWN, "challenger"),
}


def _actor_role(actor):
    if actor is None:
        return "challenger"
    if actor.is_superuser:
        return "method-lead"
    return "editor" if actor.is_staff else "public"


def _allowed(required, role):
    ladder = {
        "editor": {"editor", "method-lead"},
        "method-lead": {"method-lead"},
        "challenger": {"challenger"},
    }
    return role in ladder[required]


def challenge_transition(*, challenge_id, action, reason, actor=None, correction=None):
    """Lock, check the table and the role, move, and log the public decision.

    Accepting needs `correction` = {"en": ..., "ko": ...}: the corrected text is
    recorded with the decision and shown wherever the claim is shown.
    """
    if not plain(reason):
        raise ValidationFailed(
            _("Every decision needs a reason."), field_errors={"reason": [_("Give the reason.")]}
        )
    with transaction.atomic():
        challenge = Challenge.objects.select_for_update().get(pk=challenge_id)
        move = workflow_move(
            CHALLENGE_TRANSITIONS,
            challenge.state,
            action,
            _("A challenge that is %(state)s cannot be moved that way.")
            % {"state": challenge.get_state_display()},
        )
        target, required = move.target, move.role
        role = _actor_role(actor)
        if not _allowed(required, role):
            raise PermissionRefused(_("This decision belongs to another role."))
        if action == "screen" and challenge.email_confirmed_at is None:
            raise ValidationFailed(_("The challenger has not confirmed the e-mail address yet."))
        source = challenge.state
        challenge.state = target
        challenge.save(update_fields=["state"])
        if action == "accept":
            correction = correction or {}
            challenge_accepted.send(
                sender=Challenge,
                challenge=challenge,
                text_en=correction.get("en"),
                text_ko=correction.get("ko"),
            )
        ChallengeEvent.objects.create(
            challenge=challenge,
            action=action,
            from_state=source,
            to_state=target,
            role=role,
            actor=actor if getattr(actor, "pk", None) else None,
            reason=plain(reason),
        )
        notify_state_change(challenge, plain(reason), action)
        if action == "screen":
            notify_claim_owners(challenge)
    return challenge
