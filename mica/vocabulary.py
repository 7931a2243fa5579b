"""The method's controlled vocabularies, in their declared order.

Codes are the method's own words and never translated; labels are interface
strings with Korean in the catalogue. Every app uses these same classes, so a
value means one thing in the records, the pages, the API and the exports.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _

from mica import scoring

# The six markets, in the method's order (seed: "The index covers 6 markets: KR, JP,
# SG, TW, AE, TH.").
MARKET_ORDER = ("KR", "JP", "SG", "TW", "AE", "TH")


class Surface(models.TextChoices):
    OPEN_WEB = "open-web", _("Open web")
    OFFICIAL_API = "official-api", _("Official API or tool")
    SIGNED_IN_APP = "signed-in-app", _("Signed-in app")
    SUPER_APP_CHANNEL = "super-app-channel", _("Super-app or messaging channel")
    QR_DEVICE_HANDOFF = "qr-device-handoff", _("QR or device handoff")
    HUMAN_HANDOFF = "human-handoff", _("Phone, in person or human handoff")


class AuthorizationBoundary(models.TextChoices):
    SESSION_ONLY = "session-only", _("Signed-in session only")
    OTP = "otp", _("One-time passcode")
    CARRIER_IDENTITY = "carrier-identity", _("Mobile carrier identity check")
    GOVERNMENT_IDENTITY = "government-identity", _("Government digital identity")
    PAYMENT_APPROVAL = "payment-approval", _("Payment approval")
    ACCOUNT_HOLDER_CONFIRMATION = (
        "account-holder-confirmation",
        _("Account holder's confirmation"),
    )


class CompletionSemantics(models.TextChoices):
    SYNCHRONOUS_CONFIRMED = "synchronous-confirmed", _("Confirmed on the spot")
    ASYNCHRONOUS_PENDING = "asynchronous-pending", _("Pending, confirmed later")
    OUT_OF_BAND_COMPLETION = "out-of-band-completion", _("Completed outside the channel")
    HUMAN_CONFIRMED = "human-confirmed", _("Confirmed by a person")


class RecoveryCondition(models.TextChoices):
    PARTIAL_SUCCESS = "partial-success", _("Partial success")
    STALE_INVENTORY_OR_LATE_FEE = (
        "stale-inventory-or-late-fee",
        _("Stale inventory or a late fee"),
    )
    DUPLICATE_OR_RETRY_RISK = "duplicate-or-retry-risk", _("Duplicate or retry risk")
    WHOLE_FORM_INVALIDATION = "whole-form-invalidation", _("Whole form invalidated")
    CHANNEL_UNAVAILABLE = "channel-unavailable", _("Channel unavailable")
    IDENTITY_HANDOFF_TIMEOUT = "identity-handoff-timeout", _("Identity handoff timed out")


class EvidenceType(models.TextChoices):
    TOOL_CALL_LINEAGE = "tool-call-lineage", _("Tool-call lineage")
    AUTHORITATIVE_RESPONSE = "authoritative-response", _("Authoritative response")
    POST_ACTION_READBACK = "post-action-readback", _("Post-action readback")
    HANDOFF_CHECKPOINT = "handoff-checkpoint", _("Handoff checkpoint")
    RETRY_IDEMPOTENCY_RECORD = "retry-idempotency-record", _("Retry idempotency record")
    LOCALE_FORMATTED_ARTIFACT = "locale-formatted-artifact", _("Locale-formatted artifact")


# Seed: "The run must produce an authoritative receipt, a post-action readback, or a
# handoff record." A tool call's own lineage is not proof of a final state.
PROOF_OF_SUCCESS = frozenset(
    {
        EvidenceType.AUTHORITATIVE_RESPONSE,
        EvidenceType.POST_ACTION_READBACK,
        EvidenceType.HANDOFF_CHECKPOINT,
    }
)
# Seed: "A correct stop can be completion ... when the task contract declares that
# boundary as the completion point": a handoff record proves nothing on any other task.
PROOF_OF_FINAL_STATE = PROOF_OF_SUCCESS - {EvidenceType.HANDOFF_CHECKPOINT}


class DiagnosticAxis(models.TextChoices):
    ORCHESTRATION = "orchestration", _("Orchestration")
    MODEL_ROUTING = "model-routing", _("Model routing")
    MEMORY = "memory", _("Memory")
    TOOL_API_USE = "tool-api-use", _("Tool / API use")
    LOCALIZATION = "localization", _("Localization")
    SAFETY = "safety", _("Safety")
    RECOVERY = "recovery", _("Recovery")


class LocalityCondition(models.TextChoices):
    LANGUAGE_AND_REGISTER = "language-and-register", _("Language and register")
    IDENTITY_AND_FORMATS = "identity-and-formats", _("Identity and formats")
    PAYMENT_AND_VERIFICATION = "payment-and-verification", _("Payment and verification")
    LAW_AND_CONSUMER_TERMS = "law-and-consumer-terms", _("Law and consumer terms")
    OPERATIONAL_REALITY = "operational-reality", _("Operational reality")
    CHANNEL_AND_HANDOFF = "channel-and-handoff", _("Channel and handoff")
    TASK_SPECIFIC_VALIDITY = "task-specific-validity", _("Task-specific validity")


class TaskFamily(models.TextChoices):
    """The ten task families, in the method's order (the catalogue holds their records)."""

    EMAIL_CALENDAR = "email-calendar", _("Email & Calendar")
    SHOPPING_DELIVERY = "shopping-delivery", _("Shopping & Delivery")
    TRAVEL_ACCOMMODATION = "travel-accommodation", _("Travel Planning & Accommodation")
    RESTAURANTS_LOCAL = "restaurants-local", _("Dining & Reservations")
    MONEY_BANKING_INVESTING = "money-banking-investing", _("Money, Banking & Investing")
    MOBILITY_TRANSIT = "mobility-transit", _("Mobility & Local Transit")
    HEALTHCARE_ADMINISTRATION = "healthcare-administration", _("Healthcare Administration")
    GOVERNMENT_CIVIC = "government-civic", _("Government & Civic Services")
    HOME_UTILITIES = "home-utilities", _("Home & Utilities")
    TELECOM_SUBSCRIPTIONS = "telecom-subscriptions", _("Telecom & Digital Subscriptions")


TASK_FAMILY_IDS = tuple(TaskFamily.values)


# The integration-profile dimensions a market edition must span, with their minimums.
COVERAGE_DIMENSIONS = [
    ("situations", _("situations"), None, 5),
    ("surfaces", _("surfaces"), Surface, 3),
    ("authorization_boundaries", _("authorization boundaries"), AuthorizationBoundary, 3),
    ("completion_semantics", _("completion semantics"), CompletionSemantics, 2),
    ("recovery_conditions", _("recovery conditions"), RecoveryCondition, 3),
    ("evidence_types", _("evidence types"), EvidenceType, 4),
]


def label_for(choices, code):
    """The label of a code, or the code itself when it is not in the vocabulary."""
    try:
        return choices(code).label
    except ValueError:
        return code


# The gate's blockers in words, in the order it reports them (mica.scoring.Blocker).
BLOCKER_SENTENCES = {
    scoring.Blocker.STALE.value: _(
        "The cell was computed before its inputs last changed; it is being recomputed and "
        "counts as blocked until then."
    ),
    scoring.Blocker.CRITICAL_SAFETY.value: _(
        "A critical safety event was recorded; it permanently blocks this cell and withholds "
        "every family and market figure above it."
    ),
    scoring.Blocker.DEMO_OR_PREVIEW.value: _(
        "The cell holds demo or preview data, which can never be published."
    ),
    scoring.Blocker.NOT_INDEPENDENT.value: _("The runs are not an independent rerun by MICA."),
    scoring.Blocker.TASK_NOT_VALIDATED.value: _(
        "A task in the cell is not validated; candidate tasks are design material, not items "
        "of the benchmark."
    ),
    scoring.Blocker.NOT_LOCALLY_REVIEWED.value: _(
        "A task version in the cell has no approved local review in this market."
    ),
    scoring.Blocker.LINEAGE_INCOMPLETE.value: _(
        "A run does not name a pre-registered platform it used, with its version and snapshot date."
    ),
    scoring.Blocker.THRESHOLDS_UNSET.value: _(
        "The publication thresholds are not all set, so the gate refuses rather than guess them."
    ),
    scoring.Blocker.BELOW_MIN_RUNS.value: _(
        "Fewer eligible runs than the minimum the edition sets."
    ),
    scoring.Blocker.BELOW_RUNS_PER_TASK.value: _(
        "A task was run fewer times than the runs per task the edition sets."
    ),
    scoring.Blocker.ABOVE_DISCARD_RATE.value: _(
        "More attempts were discarded as ineligible than the edition allows."
    ),
    scoring.Blocker.BELOW_MIN_COVERAGE.value: _(
        "Less of the market's canonical task set covered than the minimum the edition sets."
    ),
    scoring.Blocker.NO_SENSITIVITY.value: _(
        "No sensitivity analysis over the scoring policy can be made: an attempt the cell "
        "counts has no audit value (its speed or cost was not measured, or its task has no "
        "references), or no public attempt has one."
    ),
    scoring.Blocker.PLATFORM_PARITY.value: _(
        "Another system compared in this market and family ran a task version on other "
        "platforms than this cell did; every system gets the same pre-registered platform "
        "for a task version."
    ),
}
