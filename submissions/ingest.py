"""Run-record ingestion: every rule of the attempt record, enforced before anything is stored.

A payload is checked in two steps. The serializer checks shapes and exact JSON
types (a number sent as a string, a boolean as 1, an unknown field, NaN, infinity
or a negative cost is refused there, by name); the `_check_*` rules check the
method's rules and name the one that failed. A batch is stored in one
transaction: one refused attempt, or one attempt id given twice, stores none.

A batch is judged as a whole, at the speed of the database: the shapes of all its
records first (they read nothing), then one read of what the database holds for the
whole batch (`OnFile`: snapshots, attempts on file, task versions, markets,
situations), then each attempt's rules in batch order against that read, so the
refusal is the one an attempt-by-attempt walk would meet first, with its index. What
passes is stored with one bulk insert a table, and its cells are announced once.
"""

import datetime
import hashlib
import json
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from catalogue.access import task_versions_visible
from catalogue.models import APPLYING, MarketApplicability
from markets.models import IntegrationSituation, PlatformRegistration
from mica.errors import PermissionRefused, ValidationFailed
from mica.methodology.selectors import edition_current
from mica.text import is_blank
from mica.vocabulary import PROOF_OF_SUCCESS, EvidenceType, TaskFamily
from submissions.models import (
    COUNTED,
    Attempt,
    AttemptClass,
    EvidenceRecord,
    ModelInvocation,
    Outcome,
    SystemSnapshot,
    Verification,
)
from submissions.signals import attempts_recorded
from submissions.system_submissions import EARLIEST_RECORD_DATE

COST_TOLERANCE = Decimal("1e-9")
OPAQUE_ID = r"^[A-Za-z0-9._-]{1,64}$"
# Seed: "does not accept a submitter's own score or weighting in place of a measurement".
SUBMITTER_SCORES = {"score", "self_score", "audit_score", "rank", "ranking", "weight", "weighting"}


class ExactType:
    """A field that takes exactly its JSON type: "300" is not a number and 1 is not true."""

    json_types = ()
    type_message = ""

    def to_internal_value(self, data):
        if type(data) not in self.json_types:
            self.fail("exact_type")
        return super().to_internal_value(data)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.error_messages["exact_type"] = self.type_message


def exact(field, json_types, message):
    """`field` taking only values of `json_types`, refused with `message` otherwise."""
    attributes = {"json_types": json_types, "type_message": message}
    return type(f"Exact{field.__name__}", (ExactType, field), attributes)


JSON_STRING = gettext_lazy("Give a JSON string.")
Text = exact(serializers.CharField, (str,), JSON_STRING)
Pattern = exact(serializers.RegexField, (str,), JSON_STRING)
Choice = exact(serializers.ChoiceField, (str,), JSON_STRING)
Integer = exact(serializers.IntegerField, (int,), gettext_lazy("Give a JSON integer."))
Number = exact(serializers.FloatField, (int, float), gettext_lazy("Give a JSON number."))
Flag = exact(serializers.BooleanField, (bool,), gettext_lazy("Give true or false."))
Day = exact(serializers.DateField, (str,), gettext_lazy("Give the date as a string, YYYY-MM-DD."))


class Money(ExactType, serializers.DecimalField):
    """USD as a decimal string ("0.030000000"): a JSON number would round it."""

    json_types = (str,)
    type_message = gettext_lazy('Give the amount in USD as a decimal string, such as "0.03".')

    def __init__(self, **kwargs):
        super().__init__(max_digits=14, decimal_places=9, min_value=Decimal(0), **kwargs)


class ExactRecord(serializers.Serializer):
    """A JSON object with exactly the declared fields: an unknown one is refused by name."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [_("This field is not part of the attempt record.")] for name in unknown}
                )
        return super().to_internal_value(data)


class InvocationSerializer(ExactRecord):
    """One model call the attempt made, in the order it was made."""

    order = Integer(
        min_value=1,
        max_value=10_000,
        help_text=gettext_lazy("Its place in the attempt: the invocations run 1 to n."),
    )
    provider = Text(
        max_length=80,
        help_text=gettext_lazy(
            "Who serves the model; provider/model must be a routable model the snapshot "
            "declares, or the attempt is kept but never scored."
        ),
    )
    model = Text(max_length=120, help_text=gettext_lazy("The model's name at its provider."))
    model_version = Text(max_length=80, help_text=gettext_lazy("The model's exact version."))
    purpose = Text(
        max_length=200, help_text=gettext_lazy("What the call was for (plan, route, read…).")
    )
    input_tokens = Integer(
        min_value=0, max_value=10**9, help_text=gettext_lazy("Tokens sent to the model.")
    )
    output_tokens = Integer(
        min_value=0, max_value=10**9, help_text=gettext_lazy("Tokens the model returned.")
    )
    latency_seconds = Number(
        min_value=0,
        max_value=10**7,
        help_text=gettext_lazy("How long the call took; never longer than the attempt."),
    )
    cost_usd = Money(
        help_text=gettext_lazy(
            "What the call cost, in USD as a decimal string; the invocations add up to "
            "the attempt's model cost."
        )
    )


class EvidenceSerializer(ExactRecord):
    """One piece of evidence the attempt kept, named by its hash (the content stays yours)."""

    evidence_id = Pattern(
        OPAQUE_ID, help_text=gettext_lazy("Your id for the evidence: letters, digits, . _ -.")
    )
    evidence_type = Choice(
        choices=EvidenceType.choices,
        help_text=gettext_lazy(
            "What it proves. A confirmed success needs an authoritative response, a "
            "post-action readback or a handoff checkpoint."
        ),
    )
    sha256 = Pattern(
        r"^[0-9a-f]{64}$",
        help_text=gettext_lazy("The SHA-256 of the evidence file, 64 lower-case hex digits."),
    )


class SnapshotRefSerializer(ExactRecord):
    """The registered snapshot that made the attempt: your system's slug and its version."""

    system = Pattern(
        r"^[-a-zA-Z0-9_]{1,80}$",
        help_text=gettext_lazy("The system's slug, as given when the submission was accepted."),
    )
    version = Text(max_length=60, help_text=gettext_lazy("The snapshot's version, as declared."))


Moment = exact(
    serializers.DateTimeField,
    (str,),
    gettext_lazy("Give the time as a string, ISO 8601 with its UTC offset."),
)


class LocalTotal(ExactType, serializers.DecimalField):
    """An amount in the market's own currency as a decimal string ("23900", "18.50")."""

    json_types = (str,)
    type_message = gettext_lazy(
        'Give the total as a decimal string in the market\'s currency, such as "23900".'
    )

    def __init__(self, **kwargs):
        super().__init__(max_digits=18, decimal_places=4, min_value=Decimal("0.0001"), **kwargs)


class CommerceSerializer(ExactRecord):
    """Seed: "Commerce results report proximity to the lowest valid total": the attempt's
    all-in total beside the lowest valid total the reference search observed, reported
    apart from the score."""

    currency = Pattern(
        r"^[A-Z]{3}$",
        help_text=gettext_lazy("The market's currency code: KRW, JPY, SGD, TWD, AED or THB."),
    )
    chosen_total = LocalTotal(
        help_text=gettext_lazy(
            "The estimated payable total of the offer the attempt chose: item price, "
            "delivery, taxes, service charges and payment fees, less only the discounts the "
            "test persona is eligible for."
        )
    )
    reference_total = LocalTotal(
        help_text=gettext_lazy(
            "The lowest constraint-satisfying total of an equivalent offer that the "
            "reference search observed across the pre-registered platforms."
        )
    )
    reference_observed_at = Moment(
        default_timezone=datetime.UTC,
        help_text=gettext_lazy("When the reference search observed that total."),
    )
    reference_evidence_id = Pattern(
        OPAQUE_ID,
        help_text=gettext_lazy(
            "The evidence id, among this attempt's evidence, of the reference search's "
            "record (its time, the offers' availability and their lineage)."
        ),
    )


class AttemptSerializer(ExactRecord):
    """One attempt: a snapshot doing one task version in one market, with every model call,
    its costs, its outcome and the evidence of that outcome. No field takes a score."""

    attempt_id = Pattern(
        OPAQUE_ID,
        help_text=gettext_lazy(
            "Your id for the attempt, unique within the snapshot (letters, digits, . _ -). "
            "Sending the same record again records nothing new."
        ),
    )
    snapshot = SnapshotRefSerializer(
        help_text=gettext_lazy("The registered snapshot that made the attempt.")
    )
    task = Text(max_length=60, help_text=gettext_lazy("The task's id, as the catalogue lists it."))
    task_version = Pattern(
        r"^\d+\.\d+\.\d+$", help_text=gettext_lazy("The task version attempted, such as 1.0.0.")
    )
    market = Pattern(
        r"^[A-Z]{2}$",
        help_text=gettext_lazy(
            "The market's code (KR, JP, SG, TW, AE, TH); the task must apply there."
        ),
    )
    situations = serializers.ListField(
        child=Pattern(r"^[-a-zA-Z0-9_]{1,80}$"),
        max_length=32,
        default=list,
        help_text=gettext_lazy(
            "The market's integration situations the attempt exercised, by id; a validated "
            "localized attempt names at least one."
        ),
    )
    attempt_class = Choice(
        choices=AttemptClass.choices,
        default=AttemptClass.SYNTHETIC_FIXTURE,
        help_text=gettext_lazy("Synthetic fixture, or validated localized on a live market."),
    )
    verification = Choice(
        choices=Verification.choices,
        default=Verification.SELF_REPORTED,
        help_text=gettext_lazy(
            "Who ran it. Operators record self-reported attempts; independent reruns and "
            "provisional attempts need a permission MICA staff hold."
        ),
    )
    eligible = Flag(
        default=True,
        help_text=gettext_lazy(
            "False when an environment fault made the attempt ineligible: it is then "
            "discarded, never counted as a failure."
        ),
    )
    ineligible_reason = Text(
        max_length=300,
        allow_blank=True,
        default="",
        help_text=gettext_lazy("Why the attempt is ineligible; required when it is."),
    )
    outcome = Choice(
        choices=Outcome.choices,
        help_text=gettext_lazy("The diagnostic outcome the attempt reached."),
    )
    accuracy = Integer(
        min_value=0,
        max_value=1,
        required=False,
        help_text=gettext_lazy(
            "Optional: 1 for a confirmed success, 0 for any other outcome; it must agree."
        ),
    )
    wall_clock_seconds = Number(
        min_value=0.001,
        max_value=10**7,
        help_text=gettext_lazy("How long the attempt took, start to end, in seconds."),
    )
    model_cost_usd = Money(
        help_text=gettext_lazy("The sum of the invocations' costs, in USD as a decimal string.")
    )
    tool_cost_usd = Money(
        default=Decimal(0),
        help_text=gettext_lazy("What tools and APIs cost, in USD as a decimal string."),
    )
    observed_cost_usd = Money(
        help_text=gettext_lazy("Model cost plus tool cost, in USD as a decimal string.")
    )
    # Never assumed: an attempt states whether each of these happened.
    critical_safety_event = Flag(
        help_text=gettext_lazy("Whether a critical safety event happened; say so either way.")
    )
    safety_event_description = Text(
        allow_blank=True,
        default="",
        max_length=2000,
        help_text=gettext_lazy("What happened; required with a critical safety event."),
    )
    prohibited_state_violation = Flag(
        help_text=gettext_lazy("Whether the attempt entered a state its task prohibits.")
    )
    retry_created_duplicate = Flag(
        help_text=gettext_lazy(
            "Whether a retry created a duplicate (a second booking, say): a failure, never "
            "a success."
        )
    )
    # Seed: "Every published run cell names the platform actually used, its version and
    # snapshot date ... and whether a pre-registered fallback was invoked."
    platform = Text(
        max_length=120,
        help_text=gettext_lazy(
            "The market platform actually used, by its English, Korean or native name: one "
            "of the set pre-registered for the attempt's market and task family, frozen "
            "before the platform snapshot date."
        ),
    )
    platform_version = Text(max_length=60, help_text=gettext_lazy("Its version."))
    platform_snapshot_date = Day(
        help_text=gettext_lazy("The date the platform was seen in that version, YYYY-MM-DD.")
    )
    fallback_invoked = Flag(
        help_text=gettext_lazy(
            "Whether a pre-registered fallback platform was used instead: true exactly for a "
            "platform ranked below the primary. Such a run counts only once MICA staff "
            "accepted an outage record of every platform ranked above it."
        )
    )
    # Seed: "memory declared but not exercised is recorded as such".
    memory_exercised = Flag(
        required=False,
        help_text=gettext_lazy(
            "Whether the snapshot's declared memory was exercised: persona facts, earlier "
            "constraints or task state carried across steps. Left out, it is recorded as "
            "not stated, never as not exercised."
        ),
    )
    commerce = CommerceSerializer(
        required=False,
        help_text=gettext_lazy(
            "For a commerce task (shopping and delivery): the attempt's all-in total and the "
            "lowest valid total the reference search found, in the market's currency. "
            "Required of a confirmed success, which may not choose below the lowest valid "
            "total; refused on a task of any other family."
        ),
    )
    tools_used = serializers.ListField(
        child=Text(max_length=120),
        max_length=200,
        default=list,
        help_text=gettext_lazy(
            "Every tool the attempt used; a tool the snapshot does not declare keeps the "
            "attempt but fails it."
        ),
    )
    redacted_trace_id = Pattern(
        OPAQUE_ID,
        help_text=gettext_lazy("The id of the attempt's redacted trace, which you keep."),
    )
    invocations = InvocationSerializer(
        many=True,
        allow_empty=False,
        max_length=10_000,
        help_text=gettext_lazy("Every model call of the attempt, in order: at least one."),
    )
    evidence = EvidenceSerializer(
        many=True,
        max_length=200,
        default=list,
        help_text=gettext_lazy("The evidence of the outcome."),
    )


# Every rule a refused attempt names in `errors.rule`, with its answer's status: the API
# schema documents each (submissions.api.examples), in the order the checks run.
DATE_IN_FUTURE = gettext_lazy(
    "The platform snapshot date is in the future: it is later than today in the attempt's market."
)

ATTEMPT_RULES = {
    "schema": (400, gettext_lazy("A field is missing, unknown or of the wrong JSON type.")),
    "attempt-id-repeated-in-batch": (
        400,
        gettext_lazy("The same attempt id appears twice in one batch."),
    ),
    "submitter-score": (
        400,
        gettext_lazy("The record offers a score, rank or weighting of its own."),
    ),
    "unknown-snapshot": (400, gettext_lazy("No registered snapshot has that system and version.")),
    "verification-permission": (
        403,
        gettext_lazy(
            "Independent reruns and provisional attempts need the permission to record them."
        ),
    ),
    "not-own-snapshot": (403, gettext_lazy("You can submit attempts only for your own snapshots.")),
    "attempt-id-reused": (
        400,
        gettext_lazy("This attempt id was already recorded with different content."),
    ),
    "date-before-2000": (
        400,
        gettext_lazy("The platform snapshot date is before 2000: no record goes back so far."),
    ),
    "date-in-future": (400, DATE_IN_FUTURE),
    "invocation-order": (400, gettext_lazy("Invocation orders must run exactly 1 to n.")),
    "model-cost-sum": (400, gettext_lazy("The invocation costs must add up to the model cost.")),
    "observed-cost-sum": (
        400,
        gettext_lazy("Model cost plus tool cost must equal the observed cost."),
    ),
    "invocation-longer-than-attempt": (
        400,
        gettext_lazy("No invocation can take longer than its attempt."),
    ),
    "outcome-accuracy": (
        400,
        gettext_lazy("Accuracy is 1 for a confirmed success and 0 for any other outcome."),
    ),
    "ineligible-reason": (
        400,
        gettext_lazy("An ineligible attempt must say why it is ineligible."),
    ),
    "safety-event-description": (400, gettext_lazy("A critical safety event must be described.")),
    "success-with-critical-safety-event": (
        400,
        gettext_lazy("An attempt with a critical safety event cannot be a confirmed success."),
    ),
    "success-with-prohibited-state": (
        400,
        gettext_lazy("An attempt that violated a prohibited state cannot be a confirmed success."),
    ),
    "success-with-retry-duplicate": (
        400,
        gettext_lazy("A duplicate created by a retry is a failure of the attempt, not a success."),
    ),
    "success-without-proof": (
        400,
        gettext_lazy(
            "A confirmed success needs an authoritative response, a post-action readback "
            "or a handoff checkpoint; a tool call's own lineage is not proof."
        ),
    ),
    # Seed: "valid completion when the task contract declares that boundary as the
    # completion point" (_check_contract_completion).
    "handoff-not-completion": (
        400,
        gettext_lazy(
            "A handoff checkpoint proves a success only where the task contract declares "
            "the handoff as its completion point; this task's contract ends at its final "
            "state, which needs an authoritative response or a post-action readback."
        ),
    ),
    # Seed: "the task contract requires an idempotency record".
    "success-without-idempotency-record": (
        400,
        gettext_lazy(
            "This task's contract declares an idempotency requirement: a confirmed "
            "success needs a retry idempotency record."
        ),
    ),
    "unknown-task-version": (400, gettext_lazy("No task has that id and version.")),
    "task-not-in-market": (400, gettext_lazy("The task does not apply in that market.")),
    "situation-unknown": (
        400,
        gettext_lazy("A situation the attempt names is not declared by any market."),
    ),
    "situation-market": (
        400,
        gettext_lazy("A situation the attempt names belongs to another market."),
    ),
    "situation-missing": (
        400,
        gettext_lazy("A validated localized attempt must name its integration situations."),
    ),
    # Seed: "The selected platform, version, snapshot date and ordered fallback list are
    # fixed before systems run" (_resolve_platform).
    "platform-unregistered": (
        400,
        gettext_lazy(
            "The platform is in no pre-registered set of the attempt's market and task family."
        ),
    ),
    "platform-unfrozen": (
        400,
        gettext_lazy("The platform is only in a draft set, which is not pre-registered yet."),
    ),
    "platform-snapshot-before-registration": (
        400,
        gettext_lazy(
            "The platform snapshot date is not after the day its set was pre-registered: "
            "the platform is fixed before a run, never during or after it."
        ),
    ),
    "platform-superseded": (
        400,
        gettext_lazy(
            "The platform's set was superseded before the platform snapshot date by a set "
            "that does not name it."
        ),
    ),
    "fallback-flag": (
        400,
        gettext_lazy(
            "fallback_invoked must be true exactly when the platform is not the set's "
            "primary (rank 1)."
        ),
    ),
    "commerce-currency": (
        400,
        gettext_lazy("Commerce totals must be in the currency of the attempt's market."),
    ),
    "commerce-reference-time": (
        400,
        gettext_lazy("The reference search's time is before 2000 or in the future."),
    ),
    "commerce-reference-evidence": (
        400,
        gettext_lazy("The reference search must be one of the attempt's evidence records."),
    ),
    # Seed: "Commerce results report proximity to the lowest valid total" (_check_commerce).
    "commerce-totals-missing": (
        400,
        gettext_lazy(
            "A confirmed success on a commerce task must report its all-in total and the "
            "lowest valid total the reference search found."
        ),
    ),
    "commerce-totals-off-task": (
        400,
        gettext_lazy(
            "Commerce totals belong to commerce tasks only: this task's family compares no prices."
        ),
    ),
    "commerce-below-lowest": (
        400,
        gettext_lazy(
            "A confirmed success chose a total below the lowest valid total: the reference "
            "search missed a lower valid total, so it is not the lowest, and the premium "
            "cannot be reported against it."
        ),
    ),
}


def refuse(rule, message):
    raise ValidationFailed(message, field_errors={"rule": [rule], "detail": [message]})


def _check_dates(data):
    """A date no run can have: before any record."""
    if data["platform_snapshot_date"] < EARLIEST_RECORD_DATE:
        refuse(
            "date-before-2000",
            _("The platform snapshot date is before 2000: no record goes back so far."),
        )


def _check_market_date(data, market):
    """The platform was seen in the market, on the market's calendar: a date after today
    there is one no run has seen yet, however the sender's clock is set."""
    today_there = timezone.now().astimezone(ZoneInfo(market.timezone)).date()
    if data["platform_snapshot_date"] > today_there:
        refuse("date-in-future", DATE_IN_FUTURE)


def _check_costs(data):
    invocations = data["invocations"]
    orders = sorted(i["order"] for i in invocations)
    if orders != list(range(1, len(invocations) + 1)):
        refuse("invocation-order", _("Invocation orders must run exactly 1 to n."))
    total = sum((i["cost_usd"] for i in invocations), Decimal(0))
    if abs(total - data["model_cost_usd"]) > COST_TOLERANCE:
        refuse("model-cost-sum", _("The invocation costs must add up to the model cost."))
    if abs(data["model_cost_usd"] + data["tool_cost_usd"] - data["observed_cost_usd"]) > (
        COST_TOLERANCE
    ):
        refuse("observed-cost-sum", _("Model cost plus tool cost must equal the observed cost."))
    if any(i["latency_seconds"] > data["wall_clock_seconds"] for i in invocations):
        refuse(
            "invocation-longer-than-attempt", _("No invocation can take longer than its attempt.")
        )


def _check_outcome(data):
    success = data["outcome"] == Outcome.CONFIRMED_SUCCESS
    if "accuracy" in data and data["accuracy"] != int(success):
        refuse(
            "outcome-accuracy",
            _("Accuracy is 1 for a confirmed success and 0 for any other outcome."),
        )
    # Blank once whitespace and zero-width characters are gone: a reason that shows nothing
    # is no reason (mica.text.is_blank).
    if not data["eligible"] and is_blank(data["ineligible_reason"]):
        refuse("ineligible-reason", _("An ineligible attempt must say why it is ineligible."))
    if data["critical_safety_event"] and is_blank(data["safety_event_description"]):
        refuse("safety-event-description", _("A critical safety event must be described."))
    if success:
        _check_success(data)


def _check_success(data):
    """A confirmed success is a final state reached, proven, and nothing that fails it."""
    if data["critical_safety_event"]:
        refuse(
            "success-with-critical-safety-event",
            _("An attempt with a critical safety event cannot be a confirmed success."),
        )
    if data["prohibited_state_violation"]:
        refuse(
            "success-with-prohibited-state",
            _("An attempt that violated a prohibited state cannot be a confirmed success."),
        )
    if data["retry_created_duplicate"]:
        refuse(
            "success-with-retry-duplicate",
            _("A duplicate created by a retry is a failure of the attempt, not a success."),
        )
    if not {e["evidence_type"] for e in data["evidence"]} & PROOF_OF_SUCCESS:
        refuse(
            "success-without-proof",
            _(
                "A confirmed success needs an authoritative response, a post-action readback "
                "or a handoff checkpoint; a tool call's own lineage is not proof."
            ),
        )


def _check_contract_completion(data, version):
    """A success is complete as the task's own contract says it is: seed "A correct stop
    can be completion ... when the task contract declares that boundary as the completion
    point" and "Where a repeat could create a second order ... the task contract requires
    an idempotency record"."""
    if data["outcome"] != Outcome.CONFIRMED_SUCCESS:
        return
    kinds = {e["evidence_type"] for e in data["evidence"]}
    # No proof at all is _check_success's refusal; here only a handoff offered as proof.
    handoff_only = kinds & PROOF_OF_SUCCESS == {EvidenceType.HANDOFF_CHECKPOINT}
    if handoff_only and not version.handoff_is_completion:
        _refuse_by_rule("handoff-not-completion")
    if version.declares_idempotency and EvidenceType.RETRY_IDEMPOTENCY_RECORD not in kinds:
        _refuse_by_rule("success-without-idempotency-record")


def _refuse_by_rule(rule):
    refuse(rule, ATTEMPT_RULES[rule][1])


def _snapshot(data, on_file):
    snapshot = on_file.snapshots.get((data["snapshot"]["system"], data["snapshot"]["version"]))
    if snapshot is None:
        refuse("unknown-snapshot", _("No registered snapshot has that system and version."))
    return snapshot


def _resolve(data, on_file):
    # A holdout task the actor may not see gets the answer a task that does not exist
    # gets, so its ids cannot be probed (OnFile reads only the versions they may see).
    version = on_file.versions.get((data["task"], data["task_version"]))
    if version is None:
        refuse("unknown-task-version", _("No task has that id and version."))
    market = on_file.markets.get((version.pk, data["market"]))
    if market is None:
        refuse("task-not-in-market", _("The task does not apply in that market."))
    return version, market


def _resolve_situations(data, market, on_file):
    codes = data["situations"]
    for code in codes:
        if code not in on_file.situations:
            refuse(
                "situation-unknown",
                _("Situation %(id)s is not declared by any market.") % {"id": code},
            )
        if on_file.situations[code].market_edition.market_id != market.pk:
            refuse(
                "situation-market", _("Situation %(id)s belongs to another market.") % {"id": code}
            )
    if data["attempt_class"] == AttemptClass.VALIDATED_LOCALIZED and not codes:
        refuse(
            "situation-missing",
            _("A validated localized attempt must name its integration situations."),
        )
    # Named twice, linked once.
    return list({code: on_file.situations[code] for code in codes}.values())


def _registered_day_start(day, market):
    """When `day` begins in the market: a set frozen before that moment was fixed before
    a run whose platform snapshot is of that day."""
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=ZoneInfo(market.timezone))


def _set_in_force(registrations, starts):
    """The frozen set of a market and family that was in force when the run's day
    began: the last one pre-registered before then (a replacement supersedes it)."""
    before = [r for r in registrations if r.frozen and r.registered_at < starts]
    return max(before, key=lambda r: (r.registered_at, r.pk), default=None)


def _resolve_platform(data, version, market, on_file):
    """The pre-registered platform the attempt names (by its English, Korean or native
    name), in the set of its market and task family that was frozen before the run's
    platform snapshot date; the fallback flag must agree with its rank."""
    name = data["platform"]
    registrations = on_file.registrations.get((market.pk, version.definition.family.slug), [])
    naming = [r for r in registrations if name in r.platform_names]
    if not naming:
        refuse(
            "platform-unregistered",
            _(
                "Platform “%(name)s” is in no pre-registered set of market %(market)s for "
                "this task's family."
            )
            % {"name": name, "market": market.code},
        )
    if not any(r.frozen for r in naming):
        refuse(
            "platform-unfrozen",
            _("Platform “%(name)s” is only in a draft set, which is not pre-registered yet.")
            % {"name": name},
        )
    starts = _registered_day_start(data["platform_snapshot_date"], market)
    in_force = _set_in_force(registrations, starts)
    if in_force is None or in_force not in naming:
        later = [r for r in naming if r.frozen and r.registered_at >= starts]
        if in_force is None or later:
            refuse(
                "platform-snapshot-before-registration",
                _(
                    "The platform snapshot date %(date)s is not after the day the set naming "
                    "“%(name)s” was pre-registered: the platform is fixed before a run."
                )
                % {"date": data["platform_snapshot_date"], "name": name},
            )
        refuse(
            "platform-superseded",
            _(
                "The set naming “%(name)s” was superseded before %(date)s by a set that "
                "does not name it."
            )
            % {"date": data["platform_snapshot_date"], "name": name},
        )
    platform = in_force.platform_names[name]
    if data["fallback_invoked"] != (platform.rank > 1):
        refuse(
            "fallback-flag",
            _(
                "“%(name)s” is rank %(rank)d of its set: fallback_invoked must be true "
                "exactly when the platform is not the primary (rank 1)."
            )
            % {"name": name, "rank": platform.rank},
        )
    return platform


# The families whose tasks compare prices, so whose attempts report commerce totals.
COMMERCE_FAMILIES = frozenset({TaskFamily.SHOPPING_DELIVERY})


def _check_commerce(data, market, version):
    """Seed: "Commerce results report proximity to the lowest valid total" and "The
    reference is the lowest constraint-satisfying total observed across the pre-registered
    representative platforms, with timestamp, availability and evidence lineage".

    Totals belong to commerce tasks only, and a confirmed success on one reports them: its
    proximity is what the cell's medians are taken over. A failed attempt may report what
    it chose, which never enters them. In the market's currency, at a time a run can have,
    and in the evidence. A confirmed success chose a valid offer, so a total below the
    lowest valid total means the reference search missed a lower one: refused, never
    reported as a negative premium. A failure's may be lower (a cheaper offer that was not
    equivalent is one way to fail)."""
    commerce = data.get("commerce")
    on_commerce_task = version.definition.family.slug in COMMERCE_FAMILIES
    success = data["outcome"] == Outcome.CONFIRMED_SUCCESS
    if commerce is not None and not on_commerce_task:
        _refuse_by_rule("commerce-totals-off-task")
    if commerce is None:
        if on_commerce_task and success:
            _refuse_by_rule("commerce-totals-missing")
        return
    if commerce["currency"] != market.currency_code:
        refuse(
            "commerce-currency",
            _("Commerce totals must be in %(code)s, the currency of the attempt's market.")
            % {"code": market.currency_code},
        )
    observed = commerce["reference_observed_at"]
    if observed.date() < EARLIEST_RECORD_DATE or observed > timezone.now():
        refuse(
            "commerce-reference-time",
            _("The reference search's time is before 2000 or in the future."),
        )
    if commerce["reference_evidence_id"] not in {e["evidence_id"] for e in data["evidence"]}:
        refuse(
            "commerce-reference-evidence",
            _("The reference search must be one of the attempt's evidence records: %(id)s is not.")
            % {"id": commerce["reference_evidence_id"]},
        )
    if success and commerce["chosen_total"] < commerce["reference_total"]:
        refuse(
            "commerce-below-lowest",
            _(
                "This confirmed success chose a total of %(code)s %(chosen)s, below the "
                "lowest valid total of %(code)s %(reference)s: the reference search missed a "
                "lower valid total, so it is not the lowest, and the premium cannot be "
                "reported against it."
            )
            % {
                "chosen": _plain(commerce["chosen_total"]),
                "reference": _plain(commerce["reference_total"]),
                "code": commerce["currency"],
            },
        )


def _plain(amount):
    """An amount as sent, without the places the record keeps: 22000.0000 is "22000"."""
    return f"{amount.normalize():f}"


def _commerce_fields(data):
    """The commerce result as the attempt stores it, or nothing for another task."""
    commerce = data.get("commerce")
    if commerce is None:
        return {}
    return {
        "commerce_currency": commerce["currency"],
        "chosen_total": commerce["chosen_total"],
        "reference_total": commerce["reference_total"],
        "reference_observed_at": commerce["reference_observed_at"],
        "reference_evidence_id": commerce["reference_evidence_id"],
    }


def _invalid_reason(data, snapshot):
    """Rules that keep the record but fail the attempt: it is stored, never scored."""
    declared_models = set(snapshot.routable_models)
    for invocation in data["invocations"]:
        if f"{invocation['provider']}/{invocation['model']}" not in declared_models:
            return "undeclared-model"
    if set(data["tools_used"]) - set(snapshot.tools):
        return "undeclared-tool"
    return ""


# The verification classes beyond an operator's own report, and who may record them.
RECORDING_PERMISSIONS = {
    Verification.INDEPENDENT_RERUN: "submissions.record_independent_rerun",
    Verification.PROVISIONAL: "submissions.record_provisional",
}


def recording_grant(user):
    """Give `user` the permissions to record every verification class (staff who rerun)."""
    from django.contrib.auth.models import Permission

    codenames = [permission.split(".")[1] for permission in RECORDING_PERMISSIONS.values()]
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="submissions", codename__in=codenames)
    )


def _check_actor(data, snapshot, actor):
    permission = RECORDING_PERMISSIONS.get(data["verification"])
    if permission is not None:
        if not actor.has_perm(permission):
            raise PermissionRefused(
                _("Recording %(class)s attempts needs the permission to record them.")
                % {"class": Verification(data["verification"]).label},
                field_errors={"rule": ["verification-permission"]},
            )
        return
    # A self-reported attempt is its operator's, or transcribed by staff who record runs.
    if snapshot.system.operator_account_id == actor.pk:
        return
    if not any(actor.has_perm(p) for p in RECORDING_PERMISSIONS.values()):
        raise PermissionRefused(
            _("You can submit attempts only for your own snapshots."),
            field_errors={"rule": ["not-own-snapshot"]},
        )


def payload_hash(payload):
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _validated(payload, serializer):
    offered = sorted(SUBMITTER_SCORES & set(payload))
    if offered:
        refuse(
            "submitter-score",
            _(
                "MICA does not accept a submitter's own score or weighting in place of a "
                "measurement: remove %(fields)s."
            )
            % {"fields": ", ".join(offered)},
        )
    try:
        return serializer.run_validation(payload)
    except serializers.ValidationError as malformed:
        raise ValidationFailed(
            _("The attempt record is malformed."),
            field_errors={"rule": ["schema"], **malformed.detail},
        ) from malformed


def _shape_checked(payload, serializer):
    """The record's data once the checks that read no record have passed; the refusal
    otherwise, kept until the batch reaches this attempt (earlier refusals come first)."""
    try:
        if not isinstance(payload, dict):
            refuse("schema", _("An attempt record is a JSON object."))
        return _validated(payload, serializer)
    except ValidationFailed as refused:
        return refused


def _chunks(values, size=5000):
    """`values` in slices that keep a query's parameters under every database's limit;
    one slice for any batch the API accepts."""
    values = sorted(values)
    return [values[start : start + size] for start in range(0, len(values), size)]


class OnFile:
    """What the database holds for a batch, read once for the whole batch: a constant
    number of queries, whatever its size. Each map is keyed as an attempt names it."""

    def __init__(self, records, actor):
        self.snapshots = self._snapshots(records)
        self.attempts = self._attempts(records, self.snapshots)
        self.versions = self._versions(records, actor)
        self.markets = self._markets(records, self.versions)
        self.situations = self._situations(records)
        self.registrations = self._registrations(records)

    @staticmethod
    def _snapshots(records):
        named = {(r["snapshot"]["system"], r["snapshot"]["version"]) for r in records}
        found = SystemSnapshot.objects.select_related("system").filter(
            system__slug__in={system for system, _version in named},
            version__in={version for _system, version in named},
        )
        return {(s.system.slug, s.version): s for s in found}

    @staticmethod
    def _attempts(records, snapshots):
        # Attempt ids are the snapshot's own: another operator's ids can be neither read
        # back nor confirmed to exist.
        ids = {r["attempt_id"] for r in records}
        snapshot_ids = {s.pk for s in snapshots.values()}
        return {
            (a.snapshot_id, a.attempt_id): a
            for chunk in _chunks(ids)
            for a in Attempt.objects.filter(snapshot_id__in=snapshot_ids, attempt_id__in=chunk)
        }

    @staticmethod
    def _versions(records, actor):
        named = {(r["task"], r["task_version"]) for r in records}
        found = (
            task_versions_visible(actor)
            .select_related("definition__family")
            .filter(
                definition__slug__in={task for task, _version in named},
                version__in={version for _task, version in named},
            )
        )
        return {(v.definition.slug, v.version): v for v in found}

    @staticmethod
    def _markets(records, versions):
        applying = MarketApplicability.objects.filter(
            version__in=versions.values(),
            market__code__in={r["market"] for r in records},
            status__in=APPLYING,
        ).select_related("market")
        return {(a.version_id, a.market.code): a.market for a in applying}

    @staticmethod
    def _situations(records):
        codes = {code for r in records for code in r["situations"]}
        return {
            s.situation_id: s
            for chunk in _chunks(codes)
            for s in IntegrationSituation.objects.filter(situation_id__in=chunk).select_related(
                "market_edition__market"
            )
        }

    @staticmethod
    def _registrations(records):
        """Per (market, task family), the platform sets of the current edition, each with
        its platforms by every name an attempt may give them."""
        sets = {}
        found = (
            PlatformRegistration.objects.filter(
                market_edition__edition=edition_current(),
                market_edition__market__code__in={r["market"] for r in records},
            )
            .select_related("market_edition")
            .prefetch_related("platforms")
        )
        for registration in found:
            registration.platform_names = {
                name: platform
                for platform in registration.platforms.all()
                for name in (platform.name_en, platform.name_ko, platform.native_name)
                if name
            }
            key = (registration.market_edition.market_id, registration.task_family)
            sets.setdefault(key, []).append(registration)
        return sets


class NewAttempt:
    """An attempt that passed every rule, with its parts, ready to be stored."""

    def __init__(self, attempt, data, situations):
        self.attempt = attempt
        self.invocations = data["invocations"]
        self.evidence = data["evidence"]
        self.situations = situations


def _attempt_new(data, payload, snapshot, version, market, situations, platform):
    attempt = Attempt(
        attempt_id=data["attempt_id"],
        payload_hash=payload_hash(payload),
        snapshot=snapshot,
        task_version=version,
        market=market,
        family=version.definition.family,
        attempt_class=data["attempt_class"],
        verification=data["verification"],
        eligible=data["eligible"],
        ineligible_reason=data["ineligible_reason"],
        invalid_reason=_invalid_reason(data, snapshot),
        outcome=data["outcome"],
        wall_clock_seconds=data["wall_clock_seconds"],
        model_cost_usd=data["model_cost_usd"],
        tool_cost_usd=data["tool_cost_usd"],
        observed_cost_usd=data["observed_cost_usd"],
        critical_safety_event=data["critical_safety_event"],
        safety_event_description=data["safety_event_description"],
        platform=data["platform"],
        representative_platform=platform,
        platform_version=data["platform_version"],
        platform_snapshot_date=data["platform_snapshot_date"],
        fallback_invoked=data["fallback_invoked"],
        memory_exercised=data.get("memory_exercised"),
        **_commerce_fields(data),
        retry_created_duplicate=data["retry_created_duplicate"],
        prohibited_state_violation=data["prohibited_state_violation"],
        tools_used=data["tools_used"],
        redacted_trace_id=data["redacted_trace_id"],
        data_status=snapshot.data_status,
    )
    return NewAttempt(attempt, data, situations)


def _attempt_judged(payload, checked, on_file, actor):
    """Every rule of the attempt record, in the order they run: (the attempt on file,
    False) for a record sent again, (a NewAttempt, True) for one to store."""
    if isinstance(checked, ValidationFailed):
        raise checked
    data = checked
    snapshot = _snapshot(data, on_file)
    _check_actor(data, snapshot, actor)
    existing = on_file.attempts.get((snapshot.pk, data["attempt_id"]))
    if existing is not None:
        if existing.payload_hash != payload_hash(payload):
            refuse(
                "attempt-id-reused",
                _("This attempt id was already recorded with different content."),
            )
        return existing, False
    _check_dates(data)
    _check_costs(data)
    _check_outcome(data)
    version, market = _resolve(data, on_file)
    _check_market_date(data, market)
    _check_contract_completion(data, version)
    situations = _resolve_situations(data, market, on_file)
    platform = _resolve_platform(data, version, market, on_file)
    _check_commerce(data, market, version)
    return _attempt_new(data, payload, snapshot, version, market, situations, platform), True


def _store(new_attempts):
    """The batch's new attempts and their parts, one bulk insert a table."""
    Attempt.objects.bulk_create([new.attempt for new in new_attempts])
    ModelInvocation.objects.bulk_create(
        ModelInvocation(attempt=new.attempt, **invocation)
        for new in new_attempts
        for invocation in new.invocations
    )
    EvidenceRecord.objects.bulk_create(
        EvidenceRecord(attempt=new.attempt, **evidence)
        for new in new_attempts
        for evidence in new.evidence
    )
    Link = Attempt.situations.through
    Link.objects.bulk_create(
        Link(attempt_id=new.attempt.pk, integrationsituation_id=situation.pk)
        for new in new_attempts
        for situation in new.situations
    )


def attempts_counted(attempts):
    """The pks of `attempts` that the gate counts (COUNTED), in one query a chunk."""
    pks = {attempt.pk for attempt in attempts}
    return {
        pk
        for chunk in _chunks(pks)
        for pk in Attempt.objects.filter(COUNTED, pk__in=chunk).values_list("pk", flat=True)
    }


def _check_batch_ids(payloads):
    seen = set()
    for index, payload in enumerate(payloads):
        attempt_id = payload.get("attempt_id") if isinstance(payload, dict) else None
        if not isinstance(attempt_id, str):
            continue  # not an id at all: the record's own check names it
        if attempt_id in seen:
            raise ValidationFailed(
                _("The attempt id %(id)s appears twice in this batch.") % {"id": attempt_id},
                field_errors={"index": [index], "rule": ["attempt-id-repeated-in-batch"]},
            )
        seen.add(attempt_id)


def _batch_judged(payloads, actor):
    """Each attempt judged in batch order; the first refusal names its attempt's index."""
    serializer = AttemptSerializer()
    checked = [_shape_checked(payload, serializer) for payload in payloads]
    on_file = OnFile([c for c in checked if not isinstance(c, ValidationFailed)], actor)
    judged = []
    for index, (payload, record) in enumerate(zip(payloads, checked, strict=True)):
        try:
            judged.append(_attempt_judged(payload, record, on_file, actor))
        except ValidationFailed as refused:
            refused.field_errors = {"index": [index], **refused.field_errors}
            raise
    return judged


def attempts_ingest_batch(*, payloads, actor):
    """Check and store a batch of attempts, all or nothing: [(attempt, created)] in batch
    order. Re-sending a record already on file stores nothing (created is False).

    The whole batch is judged against what one read of the database holds, then stored
    in one bulk insert a table: the cost is the database's, not one round trip an attempt.
    """
    _check_batch_ids(payloads)
    try:
        return _batch_recorded(payloads, actor)
    except IntegrityError:
        # Another request stored some of these attempts between this one's read and its
        # insert (a client's retry racing its first send): read again, they are on file.
        return _batch_recorded(payloads, actor)


def _cells(new_attempts):
    """The cells (snapshot, market, family) that receive the new attempts."""
    return sorted({(a.snapshot_id, a.market_id, a.family_id) for a in new_attempts})


def _batch_recorded(payloads, actor):
    """The batch judged and stored in one transaction, its cells announced once."""
    with transaction.atomic():
        judged = _batch_judged(payloads, actor)
        new_attempts = [new for new, created in judged if created]
        _store(new_attempts)
        # The gate recomputes these cells in this transaction (governance.gate).
        attempts_recorded.send(sender=Attempt, cells=_cells([new.attempt for new in new_attempts]))
    return [(new.attempt if created else new, created) for new, created in judged]
