"""The ingestion (submissions.ingest) at the lines `make mutation MUTATION_TARGETS=ingestion`
once changed unnoticed: each test here fails under such a change and passes as the code
stands.

- every field of the record is stored as sent, none left to its column's default;
- a record sent again is recognised whatever the order of its keys, and its hash is the
  SHA-256 of its canonical JSON, so a record stored by an earlier release is recognised
  too;
- the answer's "scored" names exactly the attempts of the batch the gate counts;
- the recording grant gives the two recording permissions and nothing else;
- a local total has at most 14 digits before the point and 4 after, as the schema says;
- a commerce result's refusals say what is wrong in words, and so do a malformed record,
  an unknown field and a submitter's own scores (each of them named);
- an amount in USD has at most 5 digits before the point and 9 after, as the schema says;
- a task that does not apply in the market, and a validated localized run naming no
  integration situation, are refused by name and in words;
- costs agree to the last place kept (a billionth of a dollar), and an invocation may
  last as long as its attempt;
- an element of a batch that is not a JSON object is refused in words; the counted
  attempts of a batch are read in one query; a keeper of the holdout records on it;
- the two permission refusals name their rule and say why in words;
- a market and family with no pre-registered set refuses the platform by name, and a set
  frozen at the very moment the run's day began is too late, not superseded;
- an id reused with other content, and an id said twice in a batch (even past a record
  with no id), are refused in words, the second naming its index;
- a platform snapshot before 2000 is refused in words; 2000-01-01 and today where it is
  latest on Earth are accepted;
- a batch whose attempt another request stored meanwhile is read again and answered;
- only the current edition's platform sets register a platform;
- a batch's reads do not grow with the snapshots, tasks, markets and situations it names.
"""

import datetime
import hashlib
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalogue.models import Applicability, MarketApplicability
from markets.models import IntegrationSituation, PlatformRegistration
from mica.methodology.selectors import edition_current
from mica.methodology.services import edition_start_draft
from mica.site.api_docs import api_schema
from submissions.ingest import (
    RECORDING_PERMISSIONS,
    attempts_counted,
    attempts_ingest_batch,
    payload_hash,
    recording_grant,
)
from submissions.models import Attempt
from tests.factories import (
    SnapshotFactory,
    SystemFactory,
    attempt_payload,
    attempts_post,
    holdout_keeper,
    holdout_task,
    platform_sets_of_the_examples,
)
from tests.factories import independent_rerun as rerun
from tests.governance.test_commerce_proximity import commerce_attempt

URL = "/api/v1/attempts/"


post = attempts_post


@pytest.mark.django_db
def test_every_field_of_the_record_is_stored_as_sent(client, operator):
    """Seed: "The raw outcome, latency and evaluation cost are the record." A failed,
    ineligible run with a critical safety event and a prohibited state keeps each of them,
    its verification, its tool cost and the tools it used."""
    sent = attempt_payload(
        outcome="recoverable-failure",
        accuracy=0,
        eligible=False,
        ineligible_reason="The persona's account was locked by the platform.",
        critical_safety_event=True,
        safety_event_description="Sent the invitation to the wrong party.",
        prohibited_state_violation=True,
        tool_cost_usd="0.004000000",
        observed_cost_usd="0.034000000",
        tools_used=["browser", "calendar-api"],
        redacted_trace_id="trace-failed-042",
    )
    response = post(client, operator, [sent])
    assert response.status_code == 201, response.json()
    stored = Attempt.objects.get(attempt_id=sent["attempt_id"])
    assert stored.verification == "self-reported"
    assert stored.outcome == "recoverable-failure"
    assert stored.eligible is False
    assert stored.ineligible_reason == sent["ineligible_reason"]
    assert stored.critical_safety_event is True
    assert stored.safety_event_description == sent["safety_event_description"]
    assert stored.prohibited_state_violation is True
    assert str(stored.tool_cost_usd) == "0.004000000"
    assert stored.tools_used == ["browser", "calendar-api"]
    assert stored.redacted_trace_id == "trace-failed-042"
    assert sent["situations"]
    assert list(stored.situations.values_list("situation_id", flat=True)) == sent["situations"]
    assert stored.payload_hash == payload_hash(sent)


@pytest.mark.django_db
def test_a_record_sent_again_with_its_keys_in_another_order_is_the_same_record(client, operator):
    """A record sent again is recognised, not refused as another record under its id: the
    order of a JSON object's keys carries nothing."""
    sent = attempt_payload()
    assert post(client, operator, [sent]).status_code == 201
    reordered = dict(reversed(list(sent.items())))
    reordered["snapshot"] = dict(reversed(list(sent["snapshot"].items())))
    assert list(reordered) != list(sent)
    again = post(client, operator, [reordered])
    assert again.status_code == 200, again.json()
    assert again.json()["already_recorded"] == 1
    assert Attempt.objects.count() == 1


def test_a_records_hash_is_the_sha256_of_its_canonical_json():
    """The hash is stored with the record and compared with a record sent again, perhaps
    after a release: it is the SHA-256 of the JSON with sorted keys and no spaces, so the
    same record always has the same hash."""
    record = {"b": [1, 2.5, None], "a": {"y": "ü", "x": True}}
    canonical = '{"a":{"x":true,"y":"\\u00fc"},"b":[1,2.5,null]}'
    assert payload_hash(record) == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.django_db
def test_scored_names_exactly_the_attempts_of_the_batch_the_gate_counts(
    client, staff, canonical_content
):
    """Seed: "The raw outcome, latency and evaluation cost are the record": an ineligible
    run is recorded and not scored; a counted attempt of an earlier batch is not part of
    this batch's answer."""
    assert post(client, staff, [rerun(1)]).status_code == 201
    batch = [
        rerun(2),
        rerun(3, eligible=False, ineligible_reason="The platform was down for maintenance."),
    ]
    response = post(client, staff, batch)
    assert response.status_code == 201, response.json()
    answered = {entry["attempt_id"]: entry["scored"] for entry in response.json()["attempts"]}
    assert answered == {"acme-kr-002": True, "acme-kr-003": False}
    assert Attempt.objects.count() == 3


@pytest.mark.django_db
def test_the_recording_grant_gives_the_recording_permissions_and_nothing_else():
    """The permissions to record independent reruns and provisional attempts, and not
    another app's permission that happens to share a name."""
    elsewhere = ContentType.objects.get_for_model(get_user_model())
    codenames = sorted(p.split(".")[1] for p in RECORDING_PERMISSIONS.values())
    assert codenames
    namesake = Permission.objects.create(
        content_type=elsewhere, codename=codenames[0], name="A namesake elsewhere"
    )
    user = get_user_model().objects.create_user("rerunner", password="x" * 20)
    recording_grant(user)
    granted = sorted(
        f"{p.content_type.app_label}.{p.codename}" for p in user.user_permissions.all()
    )
    assert granted == sorted(RECORDING_PERMISSIONS.values())
    assert namesake not in user.user_permissions.all()


def test_the_schema_says_a_local_total_has_14_digits_before_the_point_and_4_after():
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium." The schema documents both totals with their description."""
    commerce = api_schema()["components"]["schemas"]["Commerce"]["properties"]
    assert commerce["chosen_total"]["pattern"] == r"^-?\d{0,14}(?:\.\d{0,4})?$"
    assert commerce["reference_total"]["pattern"] == r"^-?\d{0,14}(?:\.\d{0,4})?$"
    assert commerce["chosen_total"]["description"].startswith(
        "The estimated payable total of the offer the attempt chose"
    )
    assert commerce["reference_total"]["description"].startswith(
        "The lowest constraint-satisfying total of an equivalent offer"
    )


@pytest.mark.django_db
def test_a_local_total_with_more_digits_than_recorded_is_refused(client, staff, canonical_content):
    """Seed: "MICA reports the chosen total, reference total, absolute difference and
    percentage premium": a total is kept whole or refused, never rounded."""
    for n, total in enumerate(["23900.00001", "123456789012345"], start=1):
        refused = post(client, staff, [commerce_attempt(n, {"chosen_total": total})])
        assert refused.status_code == 400, refused.json()
        assert refused.json()["errors"]["rule"] == ["schema"]
    widest = commerce_attempt(3, {"chosen_total": "12345678901234.5678"})
    assert post(client, staff, [widest]).status_code == 201
    assert Attempt.objects.count() == 1


@pytest.mark.django_db
def test_a_value_of_another_json_type_is_refused_saying_which_type_to_give(client, operator):
    """Seed: "The raw outcome, latency and evaluation cost are the record": "300" is not a
    number of seconds and 1 is not true; the refusal says what to give instead."""
    sent = attempt_payload(wall_clock_seconds="300", eligible=1, attempt_id=1001)
    response = post(client, operator, [sent])
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert errors["wall_clock_seconds"] == ["Give a JSON number."]
    assert errors["eligible"] == ["Give true or false."]
    assert errors["attempt_id"] == ["Give a JSON string."]
    assert not Attempt.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("commerce", "rule", "detail"),
    [
        (
            {"currency": "JPY"},
            "commerce-currency",
            "Commerce totals must be in KRW, the currency of the attempt's market.",
        ),
        (
            {"reference_observed_at": "2999-01-01T00:00:00+00:00"},
            "commerce-reference-time",
            "The reference search's time is before 2000 or in the future.",
        ),
        (
            {"reference_evidence_id": "search-9"},
            "commerce-reference-evidence",
            "The reference search must be one of the attempt's evidence records: search-9 is not.",
        ),
    ],
)
def test_a_commerce_result_is_refused_saying_what_is_wrong(
    client, staff, canonical_content, commerce, rule, detail
):
    """Seed: "The reference is the lowest constraint-satisfying total observed across the
    pre-registered representative platforms, with timestamp, availability and evidence
    lineage." """
    refused = post(client, staff, [commerce_attempt(1, commerce)])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == [rule]
    assert refused.json()["detail"] == detail


def kr_calendar_set():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family="email-calendar", status="registered"
    )


@pytest.mark.django_db
def test_a_family_without_any_pre_registered_set_in_the_market_refuses_the_platform(
    client, operator
):
    """Seed: "For every market and task, MICA pre-registers a candidate set of platforms":
    before it has, every platform is unregistered there (refused by name, not an error)."""
    moved = PlatformRegistration.objects.filter(
        market_edition__market__code="KR", task_family="email-calendar"
    ).update(task_family="elsewhere")
    assert moved
    refused = post(client, operator, [attempt_payload()])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["platform-unregistered"]


@pytest.mark.django_db
def test_a_set_frozen_as_the_run_day_began_is_too_late_even_with_an_older_set_in_force(
    client, operator
):
    """Seed: "The selected platform, version, snapshot date and ordered fallback list are
    fixed before systems run." An older set not naming the platform is in force; the set
    naming it was frozen at the very moment 2026-12-01 began in Seoul (15:00 UTC the day
    before): not before the run, so too late, not superseded."""
    platform_sets_of_the_examples()
    began = datetime.datetime(2026, 11, 30, 15, 0, 0, tzinfo=datetime.UTC)
    PlatformRegistration.objects.filter(pk=kr_calendar_set().pk).update(registered_at=began)
    sent = attempt_payload(platform_snapshot_date="2026-12-01")
    refused = post(client, operator, [sent])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["platform-snapshot-before-registration"]
    a_second_before = began - datetime.timedelta(seconds=1)
    PlatformRegistration.objects.filter(pk=kr_calendar_set().pk).update(
        registered_at=a_second_before
    )
    assert post(client, operator, [sent]).status_code == 201


@pytest.mark.django_db
def test_a_task_that_does_not_apply_in_the_market_is_refused_by_name(client, operator):
    """Seed: "For every market and task, MICA pre-registers a candidate set of platforms":
    a run of a task in a market where it does not apply has no place in any cell."""
    sent = attempt_payload()
    changed = MarketApplicability.objects.filter(
        version__definition__slug=sent["task"], market__code=sent["market"]
    ).update(status=Applicability.NOT_APPLICABLE)
    assert changed == 1
    refused = post(client, operator, [sent])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["task-not-in-market"]
    assert refused.json()["detail"] == "The task does not apply in that market."
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_a_validated_localized_run_naming_no_integration_situation_is_refused(
    client, staff, canonical_content
):
    """A validated localized attempt ran in the market's own situations: it names them."""
    refused = post(client, staff, [rerun(1, situations=[])])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["situation-missing"]
    assert refused.json()["detail"] == (
        "A validated localized attempt must name its integration situations."
    )
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_costs_agree_to_the_last_place_kept_and_an_invocation_may_last_the_whole_attempt(
    client, operator
):
    """Seed: "The raw outcome, latency and evaluation cost are the record": amounts are
    kept to nine places, and sums that differ by one unit of the last place agree."""
    sent = attempt_payload(model_cost_usd="0.030000001", observed_cost_usd="0.035000002")
    sent["invocations"][0]["latency_seconds"] = sent["wall_clock_seconds"]
    response = post(client, operator, [sent])
    assert response.status_code == 201, response.json()
    off_by_two = attempt_payload(attempt_id="acme-kr-002", model_cost_usd="0.030000002")
    off_by_two["observed_cost_usd"] = "0.035000002"
    refused = post(client, operator, [off_by_two])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["model-cost-sum"]


@pytest.mark.django_db
def test_the_permission_refusals_name_their_rule_and_say_why(client, operator):
    """Seed: "Verification. Independent rerun only. Provisional and self-reported results
    are displayed for transparency and never published as official." Recording an
    independent rerun needs its permission, and an operator records only for its own
    snapshots."""
    rerun_by_operator = attempt_payload(verification="independent-rerun")
    refused = post(client, operator, [rerun_by_operator])
    assert refused.status_code == 403, refused.json()
    assert refused.json()["errors"] == {"rule": ["verification-permission"]}
    assert refused.json()["detail"] == (
        "Recording Independent rerun attempts needs the permission to record them."
    )
    SnapshotFactory(system=SystemFactory(slug="other-agent", name="Other"), version="1.0")
    theirs = attempt_payload(snapshot={"system": "other-agent", "version": "1.0"})
    refused = post(client, operator, [theirs])
    assert refused.status_code == 403, refused.json()
    assert refused.json()["errors"] == {"rule": ["not-own-snapshot"]}
    assert refused.json()["detail"] == "You can submit attempts only for your own snapshots."
    assert not Attempt.objects.exists()


def test_the_schema_says_an_amount_in_usd_has_5_digits_before_the_point_and_9_after():
    """Seed: "The raw outcome, latency and evaluation cost are the record": a cost is kept
    to nine places, and the schema documents each cost with its description."""
    schemas = api_schema()["components"]["schemas"]
    attempt, invocation = schemas["Attempt"]["properties"], schemas["Invocation"]["properties"]
    for name in ("model_cost_usd", "tool_cost_usd", "observed_cost_usd"):
        assert attempt[name]["pattern"] == r"^-?\d{0,5}(?:\.\d{0,9})?$", name
    assert invocation["cost_usd"]["pattern"] == r"^-?\d{0,5}(?:\.\d{0,9})?$"
    assert attempt["model_cost_usd"]["description"] == (
        "The sum of the invocations' costs, in USD as a decimal string."
    )


@pytest.mark.django_db
def test_a_malformed_record_says_so_and_names_each_unknown_field_and_offered_score(
    client, operator
):
    """Seed: "does not accept a submitter's own score or weighting in place of a
    measurement": the scores offered are named, each of them; a field the record does not
    have is named with why."""
    unknown = attempt_payload(discount="100", coupon="X")
    refused = post(client, operator, [unknown])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["detail"] == "The attempt record is malformed."
    errors = refused.json()["errors"]
    assert errors["rule"] == ["schema"]
    assert (
        errors["discount"] == errors["coupon"] == ["This field is not part of the attempt record."]
    )
    scored = attempt_payload(score=97.5, rank=1)
    refused = post(client, operator, [scored])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["submitter-score"]
    assert refused.json()["detail"] == (
        "MICA does not accept a submitter's own score or weighting in place of a "
        "measurement: remove rank, score."
    )
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_an_element_of_a_batch_that_is_not_an_object_is_refused_in_words(client, operator):
    refused = post(client, operator, [42])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["schema"]
    assert refused.json()["detail"] == "An attempt record is a JSON object."


@pytest.mark.django_db
def test_the_counted_attempts_of_a_batch_are_read_in_one_query(
    client, staff, canonical_content, django_assert_num_queries
):
    """The answer's "scored" costs one query whatever the batch's size."""
    batch = [rerun(n) for n in range(1, 4)]
    assert post(client, staff, batch).status_code == 201
    recorded = list(Attempt.objects.all())
    assert len(recorded) == 3
    with django_assert_num_queries(1):
        counted = attempts_counted(recorded)
    assert counted == {attempt.pk for attempt in recorded}


@pytest.mark.django_db
def test_a_keeper_of_the_holdout_records_an_attempt_on_a_holdout_task(
    client, staff, canonical_content
):
    """Seed: "A holdout item is never reachable from a public artifact": inside the portal
    the people with holdout access record its runs; for anyone else it does not exist."""
    holdout_task("ec-secret-holdout-item")
    sent = rerun(1, task="ec-secret-holdout-item")
    keeper = holdout_keeper()
    response = post(client, keeper, [sent])
    assert response.status_code == 201, response.json()
    assert Attempt.objects.get().task_version.definition.slug == "ec-secret-holdout-item"


@pytest.mark.django_db
def test_an_amount_in_usd_with_more_digits_than_recorded_is_refused(client, operator):
    """Seed: "The raw outcome, latency and evaluation cost are the record": an amount is
    kept whole to nine places or refused, never rounded."""
    for n, cost in enumerate(["0.0050000001", "100000.000000000"], start=1):
        sent = attempt_payload(attempt_id=f"acme-kr-{n:03d}", tool_cost_usd=cost)
        refused = post(client, operator, [sent])
        assert refused.status_code == 400, refused.json()
        assert refused.json()["errors"]["rule"] == ["schema"]
        assert "tool_cost_usd" in refused.json()["errors"]
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_a_recorded_id_sent_with_other_content_is_refused_saying_so(client, operator):
    """A record sent again is recognised; the same id with other content is another record
    under an id already taken, refused in words."""
    sent = attempt_payload()
    assert post(client, operator, [sent]).status_code == 201
    changed = {**sent, "wall_clock_seconds": 301.0}
    refused = post(client, operator, [changed])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["attempt-id-reused"]
    assert refused.json()["detail"] == (
        "This attempt id was already recorded with different content."
    )
    assert Attempt.objects.get().wall_clock_seconds == 300


@pytest.mark.django_db
def test_an_id_twice_in_a_batch_is_named_with_its_index_after_a_record_without_an_id(
    client, operator
):
    """A batch is all or nothing and its refusal names the attempt: an id said twice is
    found across the whole batch, even past a record whose id is no id at all."""
    batch = [
        attempt_payload(attempt_id=7),
        attempt_payload(attempt_id="acme-kr-002"),
        attempt_payload(attempt_id="acme-kr-002", wall_clock_seconds=250.0),
    ]
    refused = post(client, operator, batch)
    assert refused.status_code == 400, refused.json()
    assert refused.json()["detail"] == "The attempt id acme-kr-002 appears twice in this batch."
    assert refused.json()["errors"] == {
        "index": ["2"],
        "rule": ["attempt-id-repeated-in-batch"],
    }
    assert not Attempt.objects.exists()


@pytest.mark.django_db
def test_a_platform_snapshot_before_2000_is_refused_and_the_first_day_of_2000_is_not(
    client, operator
):
    """Seed: "The selected platform, version, snapshot date and ordered fallback list are
    fixed before systems run": no record goes back before 2000, a date before it is a
    typing error, refused by name and in words; 2000-01-01 itself is a date a run can
    have (its platform set frozen the day before)."""
    refused = post(client, operator, [attempt_payload(platform_snapshot_date="1999-12-31")])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["date-before-2000"]
    assert refused.json()["detail"] == (
        "The platform snapshot date is before 2000: no record goes back so far."
    )
    PlatformRegistration.objects.filter(pk=kr_calendar_set().pk).update(
        registered_at=datetime.datetime(1999, 12, 30, tzinfo=datetime.UTC)
    )
    first = attempt_payload(platform_snapshot_date="2000-01-01")
    assert post(client, operator, [first]).status_code == 201
    assert Attempt.objects.get().platform_snapshot_date == datetime.date(2000, 1, 1)


@pytest.mark.django_db
def test_a_platform_snapshot_of_today_where_it_is_latest_on_earth_is_not_in_the_future(
    client, operator
):
    """Seed: "The selected platform, version, snapshot date and ordered fallback list are
    fixed before systems run": a snapshot of today at UTC+14 is one a run can have."""
    latest = (timezone.now() + datetime.timedelta(hours=14)).date()
    sent = attempt_payload(platform_snapshot_date=latest.isoformat())
    response = post(client, operator, [sent])
    assert response.status_code == 201, response.json()
    assert Attempt.objects.get().platform_snapshot_date == latest


@pytest.mark.django_db
def test_a_batch_whose_attempt_was_stored_meanwhile_is_read_again_and_stored_once(client, operator):
    """attempts_ingest_batch: "Another request stored some of these attempts between this
    one's read and its insert (a client's retry racing its first send): read again, they
    are on file." The first send lands just after this one read the database: the batch
    is answered, not a server error, and the attempt is on file once."""
    sent = attempt_payload()
    landed = []

    def first_send_lands(sender, instance, **kwargs):
        if landed or instance.pk is not None:
            return
        landed.append(instance.attempt_id)
        attempts_ingest_batch(payloads=[json.loads(json.dumps(sent))], actor=operator)

    post_init.connect(first_send_lands, sender=Attempt, dispatch_uid="first-send-lands")
    try:
        response = post(client, operator, [sent])
    finally:
        post_init.disconnect(sender=Attempt, dispatch_uid="first-send-lands")
    assert landed == [sent["attempt_id"]]
    assert response.status_code in (200, 201), response.json()
    assert [a["attempt_id"] for a in response.json()["attempts"]] == [sent["attempt_id"]]
    assert Attempt.objects.get().attempt_id == sent["attempt_id"]


@pytest.mark.django_db
def test_the_set_of_another_edition_does_not_register_a_platform(client, operator):
    """Seed: "For every market and task, MICA pre-registers a candidate set of platforms":
    a run is judged by the sets of the edition in force. A set of another edition that
    names a platform the current set does not name leaves it unregistered."""
    edition_start_draft(source=edition_current(), slug="preview-0.9")
    current = edition_current()
    other = PlatformRegistration.objects.exclude(market_edition__edition=current).get(
        market_edition__market__code="KR", task_family="email-calendar", status="registered"
    )
    other.platforms.filter(rank=1).update(
        name_en="Hanmail Classic", name_ko="Hanmail Classic", native_name="Hanmail Classic"
    )
    refused = post(client, operator, [attempt_payload(platform="Hanmail Classic")])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["errors"]["rule"] == ["platform-unregistered"]
    assert not Attempt.objects.exists()


def count_queries(client, user, batch):
    with CaptureQueriesContext(connection) as queries:
        response = post(client, user, batch)
    assert response.status_code in (200, 201), response.json()
    return len(queries.captured_queries)


@pytest.mark.django_db
def test_a_batch_sent_again_reads_as_often_whatever_snapshots_tasks_and_markets_it_names(
    client, staff, canonical_content
):
    """attempts_ingest_batch: "the cost is the database's, not one round trip an attempt":
    a batch naming two snapshots, two task families and two markets reads the database as
    many times as a batch of one attempt."""
    SnapshotFactory(system=SystemFactory(slug="other-agent", name="Other"), version="1.0")
    other = {"system": "other-agent", "version": "1.0"}
    one = [rerun(1)]
    wide = one + [
        rerun(2, snapshot=other),
        rerun(3, market="JP"),
        rerun(4, market="JP", snapshot=other, task="ts-mobile-plan-downgrade"),
        rerun(5, task="ts-mobile-plan-downgrade"),
    ]
    assert post(client, staff, wide).status_code == 201, "recorded first"
    assert Attempt.objects.count() == 5
    assert count_queries(client, staff, wide) == count_queries(client, staff, one)


@pytest.mark.django_db
def test_an_attempt_naming_more_situations_reads_no_more(client, staff, canonical_content):
    """attempts_ingest_batch: "the cost is the database's, not one round trip an attempt":
    an attempt naming three of its market's integration situations reads the database as
    many times as one naming one."""
    situations = list(
        IntegrationSituation.objects.filter(market_edition__market__code="KR")
        .order_by("situation_id")
        .values_list("situation_id", flat=True)[:3]
    )
    assert len(situations) == 3
    assert post(client, staff, [rerun(1)]).status_code == 201
    reads_one = count_queries(client, staff, [rerun(2, situations=situations[:1])])
    reads_three = count_queries(client, staff, [rerun(3, situations=situations)])
    assert reads_three == reads_one
    assert Attempt.objects.get(attempt_id="acme-kr-003").situations.count() == 3
