"""What the API schema shows an operator: a snapshot to submit, a batch of attempts to
record with it, and for every rule that refuses an attempt, a request that breaks it and
the answer it gets.

The examples are one story: Harbor Agent 2026.11 is submitted, accepted (its slug is then
`harbor-agent`), and records its attempts. A refusal's request example and its response
example share a name, so a reader (or a test) pairs them. Messages are lazy: the schema
is generated in the request's language and shows them in it.
"""

import copy

from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiExample

from submissions.ingest import ATTEMPT_RULES
from submissions.models import Verification


def _said(message, **params):
    return lazy(lambda: gettext(message) % params, str)()


SNAPSHOT = {"system": "harbor-agent", "version": "2026.11"}

SYSTEM_SUBMISSION = {
    "name": "Harbor Agent",
    "operator": "Harbor Labs",
    "version": SNAPSHOT["version"],
    "snapshot_date": "2026-11-20",
    "orchestrator": "harbor-orchestrator 4.2",
    "routable_models": ["example-ai/planner-large", "example-ai/router-small"],
    "tools": ["browser", "calendar-api"],
    "memory": "Per-session memory only; nothing is kept between attempts.",
    "markets": ["KR", "JP"],
    "families": ["email-calendar"],
    "market_capability": {"KR": "Signed-in web and app flows", "JP": "Web flows"},
    "access": "MICA-controlled accounts through the operator's staging console.",
    "evidence_plan": "Full invocation traces and post-action readbacks, redacted.",
    "contact_email": "ops@harbor.example",
    "language": "en",
}

ATTEMPT = {
    "attempt_id": "harbor-kr-0001",
    "snapshot": SNAPSHOT,
    "task": "ec-reschedule-three-party",
    "task_version": "1.0.0",
    "market": "KR",
    "situations": ["kr-super-app-signed-in-flow"],
    "attempt_class": "synthetic-fixture",
    "verification": "self-reported",
    "eligible": True,
    "outcome": "confirmed-success",
    "accuracy": 1,
    "wall_clock_seconds": 300.0,
    "model_cost_usd": "0.030000000",
    "tool_cost_usd": "0.005000000",
    "observed_cost_usd": "0.035000000",
    "critical_safety_event": False,
    "prohibited_state_violation": False,
    "retry_created_duplicate": False,
    # The primary of KR's pre-registered e-mail and calendar set, seen after the set was
    # frozen: a run names a platform fixed before it.
    "platform": "Naver Mail and Calendar",
    "platform_version": "10.4",
    "platform_snapshot_date": "2026-12-01",
    "fallback_invoked": False,
    "tools_used": ["browser", "calendar-api"],
    "redacted_trace_id": "trace-harbor-kr-0001",
    "invocations": [
        {
            "order": 1,
            "provider": "example-ai",
            "model": "planner-large",
            "model_version": "2026-10",
            "purpose": "plan",
            "input_tokens": 1200,
            "output_tokens": 300,
            "latency_seconds": 4.5,
            "cost_usd": "0.020000000",
        },
        {
            "order": 2,
            "provider": "example-ai",
            "model": "router-small",
            "model_version": "2026-09",
            "purpose": "route",
            "input_tokens": 200,
            "output_tokens": 20,
            "latency_seconds": 0.4,
            "cost_usd": "0.010000000",
        },
    ],
    "evidence": [
        {
            "evidence_id": "readback-0001",
            "evidence_type": "post-action-readback",
            "sha256": "9f2c" + "0" * 60,
        },
        {
            "evidence_id": "idempotency-0001",
            "evidence_type": "retry-idempotency-record",
            "sha256": "7b1d" + "0" * 60,
        },
    ],
}


def attempt(**changes):
    return {**copy.deepcopy(ATTEMPT), **changes}


VALID_BATCH = [
    attempt(),
    attempt(
        attempt_id="harbor-kr-0002",
        outcome="recoverable-failure",
        accuracy=0,
        redacted_trace_id="trace-harbor-kr-0002",
        evidence=[
            {
                "evidence_id": "lineage-0002",
                "evidence_type": "tool-call-lineage",
                "sha256": "4e1a" + "0" * 60,
            }
        ],
    ),
]

VALID_BATCH_ANSWER = {
    "recorded": 2,
    "already_recorded": 0,
    "attempts": [
        {
            "attempt_id": a["attempt_id"],
            "created": True,
            "scored": True,
            "invalid_reason": None,
            "invalid_reason_sentence": None,
        }
        for a in VALID_BATCH
    ],
}

INVOCATIONS = ATTEMPT["invocations"]
# Refused attempts carry an id not yet recorded, so each meets the rule it breaks first.
REFUSED_ID = "harbor-kr-0003"


# The story's attempt recorded before the valid batch: `attempt-id-reused` sends its id
# with other content.
EARLIER_ATTEMPT = attempt(attempt_id="harbor-kr-0000", redacted_trace_id="trace-harbor-kr-0000")
# Another operator's snapshot, which `not-own-snapshot` names.
ANOTHER_SNAPSHOT = {"system": "another-operators-agent", "version": "1.0"}


def refused(**changes):
    return attempt(attempt_id=REFUSED_ID, redacted_trace_id=f"trace-{REFUSED_ID}", **changes)


# A commerce task's attempt: the story's snapshot puts the lowest all-in equivalent offer
# in a cart on the primary of KR's pre-registered shopping and delivery set, and reports
# the total it chose beside the lowest valid total its reference search found.
SHOPPING_TASK = "sd-all-in-price-comparison"
SEARCH = {
    "evidence_id": "search-0001",
    "evidence_type": "locale-formatted-artifact",
    "sha256": "5d0e" + "0" * 60,
}
COMMERCE = {
    "currency": "KRW",
    "chosen_total": "23900",
    "reference_total": "22900",
    "reference_observed_at": "2026-11-18T10:30:00+09:00",
    "reference_evidence_id": SEARCH["evidence_id"],
}


def shopping(commerce=COMMERCE, **changes):
    """A refused confirmed success on the commerce task; `commerce=None` reports no totals."""
    sent = refused(
        task=SHOPPING_TASK,
        platform="Coupang",
        platform_version="7.2",
        evidence=[*ATTEMPT["evidence"], SEARCH],
        commerce=commerce,
        **changes,
    )
    if commerce is None:
        del sent["commerce"]
    return sent


HANDOFF = {
    "evidence_id": "handoff-0001",
    "evidence_type": "handoff-checkpoint",
    "sha256": "c3a8" + "0" * 60,
}

# For each rule: the batch that breaks it, and what the refusal says besides the rule's
# own sentence (the detail when it is another, and field errors). The rules are listed in
# submissions.ingest.ATTEMPT_RULES; `attempt-id-reused` sends the story's earlier attempt
# again with other content (submissions.api.sandbox stages the story).
REFUSED_BATCHES = {
    "schema": (
        [refused(wall_clock_seconds="300")],
        _said("The attempt record is malformed."),
        {"wall_clock_seconds": [_("Give a JSON number.")]},
    ),
    "attempt-id-repeated-in-batch": (
        [refused(), refused()],
        _said("The attempt id %(id)s appears twice in this batch.", id=REFUSED_ID),
        {"index": ["1"]},
    ),
    "submitter-score": (
        [refused(score=97)],
        _said(
            "MICA does not accept a submitter's own score or weighting in place of a "
            "measurement: remove %(fields)s.",
            fields="score",
        ),
        {},
    ),
    "unknown-snapshot": (
        [refused(snapshot={"system": "harbor-agent", "version": "0.0-unregistered"})],
        None,
        {},
    ),
    "verification-permission": (
        [refused(verification="independent-rerun")],
        _said(
            "Recording %(class)s attempts needs the permission to record them.",
            **{"class": Verification.INDEPENDENT_RERUN.label},
        ),
        {},
    ),
    "not-own-snapshot": (
        [refused(snapshot=ANOTHER_SNAPSHOT)],
        None,
        {},
    ),
    "attempt-id-reused": ([{**EARLIER_ATTEMPT, "wall_clock_seconds": 301.0}], None, {}),
    "date-before-2000": ([refused(platform_snapshot_date="1999-12-31")], None, {}),
    "date-in-future": ([refused(platform_snapshot_date="2999-01-01")], None, {}),
    "invocation-order": (
        [refused(invocations=[INVOCATIONS[0], {**INVOCATIONS[1], "order": 3}])],
        None,
        {},
    ),
    "model-cost-sum": ([refused(model_cost_usd="0.040000000")], None, {}),
    "observed-cost-sum": ([refused(observed_cost_usd="0.050000000")], None, {}),
    "invocation-longer-than-attempt": ([refused(wall_clock_seconds=4.0)], None, {}),
    "outcome-accuracy": ([refused(accuracy=0)], None, {}),
    "ineligible-reason": ([refused(eligible=False)], None, {}),
    "safety-event-description": ([refused(critical_safety_event=True)], None, {}),
    "success-with-critical-safety-event": (
        [
            refused(
                critical_safety_event=True,
                safety_event_description="Paid a deposit the user had not approved.",
            )
        ],
        None,
        {},
    ),
    "success-with-prohibited-state": ([refused(prohibited_state_violation=True)], None, {}),
    "success-with-retry-duplicate": ([refused(retry_created_duplicate=True)], None, {}),
    "success-without-proof": (
        [refused(evidence=VALID_BATCH[1]["evidence"])],
        None,
        {},
    ),
    # The example's task ends at its final state and declares an idempotency requirement.
    "handoff-not-completion": (
        [refused(evidence=[HANDOFF, ATTEMPT["evidence"][1]])],
        None,
        {},
    ),
    "success-without-idempotency-record": (
        [refused(evidence=ATTEMPT["evidence"][:1])],
        None,
        {},
    ),
    "unknown-task-version": ([refused(task_version="9.9.9")], None, {}),
    "task-not-in-market": (
        [refused(task="gc-change-of-address-report", market="AE", situations=[])],
        None,
        {},
    ),
    "situation-unknown": (
        [refused(situations=["kr-no-such-situation"])],
        _said("Situation %(id)s is not declared by any market.", id="kr-no-such-situation"),
        {},
    ),
    "situation-market": (
        [refused(situations=["jp-konbini-completion"])],
        _said("Situation %(id)s belongs to another market.", id="jp-konbini-completion"),
        {},
    ),
    "situation-missing": (
        [refused(attempt_class="validated-localized", situations=[])],
        None,
        {},
    ),
    "platform-unregistered": (
        [refused(platform="Kakao Calendar")],
        _said(
            "Platform “%(name)s” is in no pre-registered set of market %(market)s for this "
            "task's family.",
            name="Kakao Calendar",
            market="KR",
        ),
        {},
    ),
    "platform-unfrozen": (
        [refused(platform="Naver Calendar Beta")],
        _said(
            "Platform “%(name)s” is only in a draft set, which is not pre-registered yet.",
            name="Naver Calendar Beta",
        ),
        {},
    ),
    "platform-snapshot-before-registration": (
        [refused(platform_snapshot_date="2026-11-30")],
        _said(
            "The platform snapshot date %(date)s is not after the day the set naming "
            "“%(name)s” was pre-registered: the platform is fixed before a run.",
            date="2026-11-30",
            name="Naver Mail and Calendar",
        ),
        {},
    ),
    "platform-superseded": (
        [refused(platform="Hanmail Classic")],
        _said(
            "The set naming “%(name)s” was superseded before %(date)s by a set that does "
            "not name it.",
            name="Hanmail Classic",
            date="2026-12-01",
        ),
        {},
    ),
    "fallback-flag": (
        [refused(platform="Daum Mail")],
        _said(
            "“%(name)s” is rank %(rank)d of its set: fallback_invoked must be true exactly "
            "when the platform is not the primary (rank 1).",
            name="Daum Mail",
            rank=2,
        ),
        {},
    ),
    "commerce-currency": (
        [shopping({**COMMERCE, "currency": "USD"})],
        _said(
            "Commerce totals must be in %(code)s, the currency of the attempt's market.",
            code="KRW",
        ),
        {},
    ),
    "commerce-reference-time": (
        [shopping({**COMMERCE, "reference_observed_at": "2999-01-01T00:00:00+09:00"})],
        None,
        {},
    ),
    "commerce-reference-evidence": (
        [shopping({**COMMERCE, "reference_evidence_id": "search-9999"})],
        _said(
            "The reference search must be one of the attempt's evidence records: %(id)s is not.",
            id="search-9999",
        ),
        {},
    ),
    "commerce-totals-missing": ([shopping(None)], None, {}),
    # The story's e-mail and calendar attempt, sent with a commerce task's totals.
    "commerce-totals-off-task": (
        [refused(commerce=COMMERCE, evidence=[*ATTEMPT["evidence"], SEARCH])],
        None,
        {},
    ),
    "commerce-below-lowest": (
        [shopping({**COMMERCE, "chosen_total": "21900"})],
        _said(
            "This confirmed success chose a total of %(code)s %(chosen)s, below the lowest "
            "valid total of %(code)s %(reference)s: the reference search missed a lower "
            "valid total, so it is not the lowest, and the premium cannot be reported "
            "against it.",
            code="KRW",
            chosen="21900",
            reference="22900",
        ),
        {},
    ),
}


def refusal_answer(rule):
    """The body of the answer to the batch that breaks `rule`."""
    status, sentence = ATTEMPT_RULES[rule]
    _batch, detail, errors = REFUSED_BATCHES[rule]
    detail = sentence if detail is None else detail
    if status == 403:
        return {"detail": detail, "errors": {"rule": [rule]}}
    if rule in ("schema", "attempt-id-repeated-in-batch"):
        # These name the rule and the fields; the other rules repeat their sentence.
        return {"detail": detail, "errors": {"index": ["0"], "rule": [rule], **errors}}
    return {"detail": detail, "errors": {"index": ["0"], "rule": [rule], "detail": [detail]}}


def attempt_examples():
    """The request examples of POST /api/v1/attempts/ and the response examples paired
    with them by name."""
    examples = [
        OpenApiExample(
            "valid-batch",
            summary=_("A batch of two attempts, recorded"),
            value=VALID_BATCH,
            request_only=True,
        ),
        OpenApiExample(
            "valid-batch",
            summary=_("A batch of two attempts, recorded"),
            value=VALID_BATCH_ANSWER,
            response_only=True,
            status_codes=["201"],
        ),
    ]
    for rule, (status, sentence) in ATTEMPT_RULES.items():
        batch = REFUSED_BATCHES[rule][0]
        examples += [
            OpenApiExample(rule, summary=sentence, value=batch, request_only=True),
            OpenApiExample(
                rule,
                summary=sentence,
                value=refusal_answer(rule),
                response_only=True,
                status_codes=[str(status)],
            ),
        ]
    return examples


def refusal_examples(refusals):
    """Request and response examples, paired by name, of each refusal in `refusals`
    ({name: (summary, status, request body, answer)})."""
    examples = []
    for name, (summary, status, body, answer) in refusals.items():
        examples += [
            OpenApiExample(name, summary=summary, value=body, request_only=True),
            OpenApiExample(
                name,
                summary=summary,
                value=answer,
                response_only=True,
                status_codes=[str(status)],
            ),
        ]
    return examples


SYSTEM_SUBMISSION_REFUSALS = {
    "snapshot-date-in-the-future": (
        _("A snapshot date in the future"),
        400,
        {**SYSTEM_SUBMISSION, "snapshot_date": "2999-01-01"},
        {
            "detail": _("The submission was not received."),
            "errors": {
                "snapshot_date": [
                    _("The snapshot date is in the future: give the date the snapshot was frozen.")
                ]
            },
        },
    ),
    "self-supplied-score": (
        _("A self-supplied score"),
        400,
        {**SYSTEM_SUBMISSION, "self_score": 97},
        {
            "detail": _(
                "Self-supplied scores, rankings, weightings or payments are never accepted."
            ),
            "errors": {
                "self_score": [
                    _(
                        "This field is refused: MICA measures, it does not take numbers or "
                        "money from submitters."
                    )
                ]
            },
        },
    ),
}

CHALLENGE = {
    "edition": "preview-0.1",
    "section_id": "world-first-claim",
    "challenge_type": "method",
    "what_is_wrong": "The scope claim overlooks an earlier benchmark.",
    "proposed_replacement": "Narrow the claim to outcome-verified execution.",
    "citations": [{"source": "https://example.org/paper", "accessed": "2026-11-20"}],
    "contact_email": "challenger@example.org",
    "public_name": "A. Reader",
    "language": "en",
    "idempotency_key": "challenge-0001",
}

CHALLENGE_REFUSALS = {
    "what-is-wrong-missing": (
        _("What is wrong, left out"),
        400,
        {key: value for key, value in CHALLENGE.items() if key != "what_is_wrong"},
        {
            "detail": _("The challenge was not filed."),
            "errors": {"what_is_wrong": [_("This field is required.")]},
        },
    ),
    "idempotency-key-reused": (
        _("An idempotency key reused for another challenge"),
        409,
        {**CHALLENGE, "what_is_wrong": "Another text under the same key."},
        {
            "detail": _(
                "This idempotency key was already used for a different challenge. "
                "Send a new key to file another challenge."
            ),
            "errors": {"idempotency_key": [_("Already used for a challenge with other content.")]},
        },
    ),
}
