"""Run-record ingestion: every rule of the attempt record, enforced before anything is stored.

A payload is checked in two steps. The serializer checks shapes and types (a
wrong type, NaN, infinity or a negative cost is refused there); `attempt_rules`
checks the method's rules and names the one that failed. A batch is stored in
one transaction: one refused attempt stores none of them.
"""

import hashlib
import json
from decimal import Decimal

from django.db import transaction
from django.utils.translation import gettext as _
from rest_framework import serializers

from catalogue.models import APPLYING, TaskVersion
from markets.models import IntegrationSituation
from mica.errors import PermissionRefused, ValidationFailed
from mica.vocabulary import EvidenceType
from submissions.models import (
    Attempt,
    AttemptClass,
    EvidenceRecord,
    ModelInvocation,
    Outcome,
    SystemSnapshot,
    Verification,
)
from submissions.signals import attempts_recorded

COST_TOLERANCE = Decimal("1e-9")
MONEY = {"max_digits": 14, "decimal_places": 9, "min_value": Decimal(0)}
OPAQUE_ID = r"^[A-Za-z0-9._-]{1,64}$"


class InvocationSerializer(serializers.Serializer):
    order = serializers.IntegerField(min_value=1, max_value=10_000)
    provider = serializers.CharField(max_length=80)
    model = serializers.CharField(max_length=120)
    model_version = serializers.CharField(max_length=80)
    purpose = serializers.CharField(max_length=200)
    input_tokens = serializers.IntegerField(min_value=0, max_value=10**9)
    output_tokens = serializers.IntegerField(min_value=0, max_value=10**9)
    latency_seconds = serializers.FloatField(min_value=0, max_value=10**7)
    cost_usd = serializers.DecimalField(**MONEY)


class EvidenceSerializer(serializers.Serializer):
    evidence_id = serializers.RegexField(OPAQUE_ID)
    evidence_type = serializers.ChoiceField(choices=EvidenceType.choices)
    sha256 = serializers.RegexField(r"^[0-9a-f]{64}$")


class SnapshotRefSerializer(serializers.Serializer):
    system = serializers.SlugField(max_length=80)
    version = serializers.CharField(max_length=60)


class AttemptSerializer(serializers.Serializer):
    attempt_id = serializers.RegexField(OPAQUE_ID)
    snapshot = SnapshotRefSerializer()
    task = serializers.CharField(max_length=60)
    task_version = serializers.RegexField(r"^\d+\.\d+\.\d+$")
    market = serializers.RegexField(r"^[A-Z]{2}$")
    situations = serializers.ListField(
        child=serializers.SlugField(max_length=80), max_length=32, default=list
    )
    attempt_class = serializers.ChoiceField(
        choices=AttemptClass.choices, default=AttemptClass.SYNTHETIC_FIXTURE
    )
    verification = serializers.ChoiceField(
        choices=Verification.choices, default=Verification.SELF_REPORTED
    )
    eligible = serializers.BooleanField(default=True)
    ineligible_reason = serializers.CharField(max_length=300, allow_blank=True, default="")
    outcome = serializers.ChoiceField(choices=Outcome.choices)
    accuracy = serializers.IntegerField(min_value=0, max_value=1, required=False)
    wall_clock_seconds = serializers.FloatField(min_value=0.001, max_value=10**7)
    model_cost_usd = serializers.DecimalField(**MONEY)
    tool_cost_usd = serializers.DecimalField(**MONEY, default=Decimal(0))
    observed_cost_usd = serializers.DecimalField(**MONEY)
    critical_safety_event = serializers.BooleanField(default=False)
    safety_event_description = serializers.CharField(allow_blank=True, default="", max_length=2000)
    platform = serializers.CharField(max_length=120, allow_blank=True, default="")
    platform_version = serializers.CharField(max_length=60, allow_blank=True, default="")
    fallback_invoked = serializers.BooleanField(default=False)
    tools_used = serializers.ListField(
        child=serializers.CharField(max_length=120), max_length=200, default=list
    )
    retry_created_duplicate = serializers.BooleanField(default=False)
    redacted_trace_id = serializers.RegexField(OPAQUE_ID)
    invocations = InvocationSerializer(many=True, allow_empty=False, max_length=10_000)
    evidence = EvidenceSerializer(many=True, default=list, max_length=200)


def refuse(rule, message):
    raise ValidationFailed(message, field_errors={"rule": [rule], "detail": [message]})


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
    if not data["eligible"] and not data["ineligible_reason"].strip():
        refuse("ineligible-reason", _("An ineligible attempt must say why it is ineligible."))
    if data["critical_safety_event"] and not data["safety_event_description"].strip():
        refuse("safety-event-description", _("A critical safety event must be described."))


def _resolve(data):
    try:
        snapshot = SystemSnapshot.objects.select_related("system").get(
            system__slug=data["snapshot"]["system"], version=data["snapshot"]["version"]
        )
    except SystemSnapshot.DoesNotExist:
        refuse("unknown-snapshot", _("No registered snapshot has that system and version."))
    try:
        version = TaskVersion.objects.select_related("definition__family").get(
            definition__slug=data["task"], version=data["task_version"]
        )
    except TaskVersion.DoesNotExist:
        refuse("unknown-task-version", _("No task has that id and version."))
    applicable = (
        version.applicability.filter(market__code=data["market"])
        .filter(status__in=APPLYING)
        .select_related("market")
        .first()
    )
    if applicable is None:
        refuse("task-not-in-market", _("The task does not apply in that market."))
    return snapshot, version, applicable.market


def _resolve_situations(data, market):
    codes = data["situations"]
    found = {
        s.situation_id: s
        for s in IntegrationSituation.objects.filter(situation_id__in=codes).select_related(
            "market_edition__market"
        )
    }
    for code in codes:
        if code not in found:
            refuse(
                "situation-unknown",
                _("Situation %(id)s is not declared by any market.") % {"id": code},
            )
        if found[code].market_edition.market_id != market.pk:
            refuse(
                "situation-market", _("Situation %(id)s belongs to another market.") % {"id": code}
            )
    if data["attempt_class"] == AttemptClass.VALIDATED_LOCALIZED and not codes:
        refuse(
            "situation-missing",
            _("A validated localized attempt must name its integration situations."),
        )
    return [found[code] for code in codes]


def _invalid_reason(data, snapshot):
    """Rules that keep the record but fail the attempt: it is stored, never scored."""
    declared_models = set(snapshot.routable_models)
    for invocation in data["invocations"]:
        if f"{invocation['provider']}/{invocation['model']}" not in declared_models:
            return "undeclared-model"
    if set(data["tools_used"]) - set(snapshot.tools):
        return "undeclared-tool"
    if data["retry_created_duplicate"]:
        return "duplicate-created-by-retry"
    return ""


def _check_actor(data, snapshot, actor):
    if actor.is_staff:
        return
    if snapshot.system.operator_account_id != actor.pk:
        raise PermissionRefused(_("You can submit attempts only for your own snapshots."))
    if data["verification"] != Verification.SELF_REPORTED:
        raise PermissionRefused(
            _("Operators submit self-reported attempts; only MICA staff record independent reruns.")
        )


def payload_hash(payload):
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _validated(payload):
    serializer = AttemptSerializer(data=payload)
    if not serializer.is_valid():
        raise ValidationFailed(
            _("The attempt record is malformed."),
            field_errors={"rule": ["schema"], **serializer.errors},
        )
    return serializer.validated_data


def _store(data, payload, snapshot, version, market, situations, actor):
    attempt = Attempt.objects.create(
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
        platform_version=data["platform_version"],
        fallback_invoked=data["fallback_invoked"],
        tools_used=data["tools_used"],
        redacted_trace_id=data["redacted_trace_id"],
        data_status=snapshot.data_status,
    )
    attempt.situations.set(situations)
    ModelInvocation.objects.bulk_create(
        ModelInvocation(attempt=attempt, **i) for i in data["invocations"]
    )
    EvidenceRecord.objects.bulk_create(
        EvidenceRecord(attempt=attempt, **e) for e in data["evidence"]
    )
    return attempt


def attempt_ingest(*, payload, actor):
    """Check and store one attempt; (attempt, created). Re-sending the same record is a no-op."""
    if not isinstance(payload, dict):
        refuse("schema", _("An attempt record is a JSON object."))
    data = _validated(payload)
    existing = Attempt.objects.filter(attempt_id=data["attempt_id"]).first()
    if existing is not None:
        if existing.payload_hash != payload_hash(payload):
            refuse(
                "attempt-id-reused",
                _("This attempt id was already recorded with different content."),
            )
        return existing, False
    _check_costs(data)
    _check_outcome(data)
    snapshot, version, market = _resolve(data)
    _check_actor(data, snapshot, actor)
    situations = _resolve_situations(data, market)
    return _store(data, payload, snapshot, version, market, situations, actor), True


def attempts_ingest_batch(*, payloads, actor):
    """All or nothing: every attempt is stored, or none is."""
    results = []
    with transaction.atomic():
        for index, payload in enumerate(payloads):
            try:
                results.append(attempt_ingest(payload=payload, actor=actor))
            except ValidationFailed as refused:
                refused.field_errors = {"index": [index], **refused.field_errors}
                raise
        # The gate recomputes these cells in this transaction (governance.gate).
        cells = sorted(
            {(a.snapshot_id, a.market_id, a.family_id) for a, created in results if created}
        )
        attempts_recorded.send(sender=Attempt, cells=cells)
    return results
