"""An attempt names a platform pre-registered and frozen for its market and task family
before its run; a fallback counts only with an accepted outage record.

Every intake (the API, the JSON Lines command, the batch function behind both) refuses
an unregistered, unfrozen, superseded or too early platform by a named rule.
"""

import datetime
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from markets.models import PlatformRegistration
from markets.workflows import outage_decide, outage_report
from submissions.ingest import attempts_ingest_batch
from submissions.models import Attempt
from tests.factories import (
    StaffFactory,
    api_auth,
    grant,
    platform_sets_of_the_examples,
    registered_platform,
)

pytestmark = pytest.mark.django_db

SEED = Path(__file__).parents[1] / "fixtures" / "seeds"
FIXED_BEFORE_A_RUN = (
    "The selected platform, version, snapshot date and ordered fallback list are fixed "
    "before systems run."
)
OUTAGE_ONLY = (
    "A fallback is used only for a documented platform outage, never because it is easier "
    "for one system."
)
REPRESENTATIVE_SET = "For every market and task, MICA pre-registers a candidate set of platforms"


def test_the_seed_says_it():
    (seed,) = SEED.glob("000_*.txt")
    text = " ".join(seed.read_text(encoding="utf-8").split())
    assert all(line in text for line in (FIXED_BEFORE_A_RUN, OUTAGE_ONLY, REPRESENTATIVE_SET))


def post(client, user, payloads, language="en"):
    return client.post(
        "/api/v1/attempts/",
        json.dumps(payloads),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
        **api_auth(user),
    )


def refused_by(client, user, payload, rule):
    answer = post(client, user, [payload])
    assert answer.status_code == 400, answer.json()
    assert answer.json()["errors"]["rule"] == [rule], answer.json()
    korean = post(client, user, [payload], language="ko").json()
    assert korean["errors"]["rule"] == [rule] and korean["detail"] != answer.json()["detail"]
    assert not Attempt.objects.exists()
    return answer.json()["detail"]


def kr_set():
    return PlatformRegistration.objects.get(
        market_edition__market__code="KR", task_family="email-calendar", status="registered"
    )


def freeze_kr_set_at(moment):
    PlatformRegistration.objects.filter(pk=kr_set().pk).update(registered_at=moment)


# --- Registered and frozen before the run ----------------------------------------------


def test_an_attempt_on_the_pre_registered_primary_is_recorded_with_its_selection_evidence(
    client, operator, payload
):
    """Seed: "Representative local platforms are fixed before a run"."""
    assert post(client, operator, [payload]).status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.representative_platform == kr_set().platforms.get(rank=1)
    assert attempt.platform == "Naver Mail and Calendar" and not attempt.fallback_invoked
    assert attempt.scored_eligible


@pytest.mark.parametrize("name", ["네이버 메일·캘린더", "네이버 메일"])
def test_a_platform_is_named_in_korean_or_natively_too(client, operator, payload, name):
    payload["platform"] = name
    assert post(client, operator, [payload]).status_code == 201
    assert Attempt.objects.get().representative_platform.rank == 1


def test_an_unregistered_platform_is_refused_by_name(client, operator, payload):
    """Seed: "For every market and task, MICA pre-registers a candidate set of platforms"."""
    payload["platform"] = "Kakao Calendar"
    detail = refused_by(client, operator, payload, "platform-unregistered")
    assert "Kakao Calendar" in detail and "KR" in detail


def test_a_platform_of_another_market_or_family_is_not_registered_here(client, operator, payload):
    payload["platform"] = registered_platform("JP")  # JP's e-mail and calendar primary
    refused_by(client, operator, payload, "platform-unregistered")
    payload["platform"] = registered_platform("KR", "sd-all-in-price-comparison")
    refused_by(client, operator, payload, "platform-unregistered")


def test_a_draft_replacement_leaves_the_set_in_force_usable(client, operator, payload):
    """Until someone freezes it, a replacement is a draft: the set in force still rules,
    even where the draft copies its platforms."""
    from markets.services import platform_registration_draft_replacement
    from tests.factories import LeadFactory

    platform_registration_draft_replacement(
        registration_id=kr_set().pk, reason_en="Why.", reason_ko="이유.", actor=LeadFactory()
    )
    assert post(client, operator, [payload]).status_code == 201
    assert Attempt.objects.get().representative_platform.registration == kr_set()


def test_a_platform_only_in_a_draft_set_is_refused(client, operator, payload):
    """A set is frozen (pre-registered) before any run on it."""
    platform_sets_of_the_examples()
    payload["platform"] = "Naver Calendar Beta"
    refused_by(client, operator, payload, "platform-unfrozen")


@pytest.mark.parametrize(
    ("day", "rule"),
    [
        ("2026-11-29", "platform-snapshot-before-registration"),
        ("2026-11-30", "platform-snapshot-before-registration"),
        ("2026-12-01", None),
    ],
)
def test_the_snapshot_date_comes_after_the_day_the_set_was_frozen(
    client, operator, payload, day, rule
):
    """Seed: "The selected platform, version, snapshot date and ordered fallback list are
    fixed before systems run." The shipped KR set was frozen on 2026-11-30."""
    payload["platform_snapshot_date"] = day
    if rule is None:
        assert post(client, operator, [payload]).status_code == 201
    else:
        assert "2026-11-" in refused_by(client, operator, payload, rule)


@pytest.mark.parametrize(
    ("frozen_at", "accepted"),
    [
        # 2026-12-01 00:00 in Seoul is 2026-11-30 15:00 UTC.
        (datetime.datetime(2026, 11, 30, 14, 59, 59, tzinfo=datetime.UTC), True),
        (datetime.datetime(2026, 11, 30, 15, 0, 0, tzinfo=datetime.UTC), False),
        (datetime.datetime(2026, 11, 30, 16, 0, 0, tzinfo=datetime.UTC), False),
    ],
)
def test_frozen_before_the_run_day_began_in_the_market(
    client, operator, payload, frozen_at, accepted
):
    """ "Fixed before systems run": frozen before the snapshot date began in the market's
    own time zone, not during that day; a freeze at the very moment it began is not
    before it."""
    freeze_kr_set_at(frozen_at)
    payload["platform_snapshot_date"] = "2026-12-01"
    if accepted:
        assert post(client, operator, [payload]).status_code == 201
    else:
        refused_by(client, operator, payload, "platform-snapshot-before-registration")


def test_a_snapshot_date_in_the_future_is_refused(client, operator, payload):
    """Later than today anywhere on Earth (UTC+14) is refused before any platform rule."""
    tomorrow_everywhere = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=14)))
    payload["platform_snapshot_date"] = (
        tomorrow_everywhere.date() + datetime.timedelta(days=1)
    ).isoformat()
    refused_by(client, operator, payload, "date-in-future")


def test_a_platform_of_a_superseded_set_counts_only_before_the_set_was_replaced(
    client, operator, payload
):
    """A replacement supersedes the old set from its freeze on; runs made before stay
    valid, and a run after names the set in force."""
    older, _draft = platform_sets_of_the_examples()  # older set frozen 2026-11-01
    payload.update(platform="Hanmail Classic", platform_snapshot_date="2026-12-01")
    detail = refused_by(client, operator, payload, "platform-superseded")
    assert "Hanmail Classic" in detail
    payload["platform_snapshot_date"] = "2026-11-15"  # in force then, the shipped set not yet
    assert post(client, operator, [payload]).status_code == 201
    assert Attempt.objects.get().representative_platform.registration == older


def test_a_platform_in_a_set_frozen_after_the_run_is_not_superseded_but_too_late(
    client, operator, payload
):
    platform_sets_of_the_examples()
    payload["platform_snapshot_date"] = "2026-11-15"  # the shipped set was frozen 11-30
    refused_by(client, operator, payload, "platform-snapshot-before-registration")


@pytest.mark.parametrize(("rank", "flag"), [(2, False), (1, True)])
def test_the_fallback_flag_agrees_with_the_platform_rank(client, operator, payload, rank, flag):
    """Seed: "whether a pre-registered fallback was invoked": rank 1 is the primary."""
    payload.update(platform=registered_platform("KR", rank=rank), fallback_invoked=flag)
    detail = refused_by(client, operator, payload, "fallback-flag")
    assert f"rank {rank}" in detail


def test_the_command_and_the_batch_function_refuse_as_the_api_does(
    staff, payload, tmp_path, operator
):
    payload["platform"] = "Kakao Calendar"
    batch = tmp_path / "run.jsonl"
    batch.write_text(json.dumps(payload) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="platform-unregistered"):
        call_command("ingest_attempts", str(batch), "--as-user", staff.username)
    from mica.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as refused:
        attempts_ingest_batch(payloads=[payload], actor=operator)
    assert refused.value.field_errors["rule"] == ["platform-unregistered"]
    assert not Attempt.objects.exists()


REGISTRY_TABLES = ("platformregistration", "representativeplatform")


def test_the_platform_rules_read_the_registry_once_a_batch(client, operator, payload):
    """A batch reads the platform sets in one query and their platforms in one more,
    whatever its size (and the gate one more for the platforms its cells name)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    payloads = [
        {**payload, "attempt_id": f"acme-kr-{n:03d}", "redacted_trace_id": f"trace-{n}"}
        for n in range(40)
    ]
    reads = []
    for batch in (payloads[:2], payloads[2:]):
        with CaptureQueriesContext(connection) as read:
            assert post(client, operator, batch).status_code == 201
        reads.append(
            [
                q["sql"]
                for q in read.captured_queries
                if any(q["sql"].startswith(f'SELECT "markets_{t}".') for t in REGISTRY_TABLES)
            ]
        )
    # Ingestion's sets and platforms, and the gate's platforms of the cell's runs.
    assert len(reads[0]) == len(reads[1]) == 3, reads


# --- A fallback counts only with an accepted outage record ----------------------------


def kr_staff(username, lead):
    user = StaffFactory(username=username)
    grant(user, "KR", "reviewer", lead)
    return user


@pytest.fixture
def deciders(canonical_content):
    from tests.factories import LeadFactory

    lead = LeadFactory()
    return kr_staff("kr-reporter", lead), kr_staff("kr-decider", lead)


def outage(platform_rank, deciders, first, last, accept=True):
    reporter, decider = deciders
    record = outage_report(
        platform=kr_set().platforms.get(rank=platform_rank),
        first_day=datetime.date.fromisoformat(first),
        last_day=datetime.date.fromisoformat(last),
        evidence="https://status.example/naver",
        actor=reporter,
    )
    outage_decide(
        outage_id=record.pk,
        action="accept" if accept else "reject",
        reason="The status page shows it.",
        actor=decider,
    )
    return record


def on_fallback(payload, rank=2):
    payload.update(platform=registered_platform("KR", rank=rank), fallback_invoked=True)
    return payload


def test_a_run_on_a_fallback_is_kept_and_not_counted_without_an_accepted_outage(
    client, operator, payload, deciders, django_capture_on_commit_callbacks
):
    """Seed: "A fallback is used only for a documented platform outage, never because it
    is easier for one system." Kept in the record, it does not count, and the evidence
    page says why."""
    from governance.models import GateCell

    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, operator, [on_fallback(payload)]).status_code == 201
    attempt = Attempt.objects.get()
    assert attempt.representative_platform.rank == 2 and not attempt.scored_eligible
    cell = GateCell.objects.get()
    assert (cell.attempts, cell.eligible_runs, cell.invalid_runs) == (1, 0, 1)
    page = client.get(f"/evidence/{cell.cell_id}/").text
    assert "not counted: no accepted outage record of the platforms ranked above it" in page
    korean = client.get(f"/ko/evidence/{cell.cell_id}/").text
    assert "집계하지 않음" in korean

    outage(1, deciders, "2026-11-30", "2026-12-02", accept=False)  # rejected: still not
    attempt.refresh_from_db()
    assert not attempt.scored_eligible

    with django_capture_on_commit_callbacks(execute=True):
        outage(1, deciders, "2026-12-01", "2026-12-01")
    assert attempt.scored_eligible
    cell = GateCell.objects.get()  # recomputed in the decision's transaction
    assert (cell.eligible_runs, cell.invalid_runs) == (1, 0)
    assert "not counted: no accepted outage" not in client.get(f"/evidence/{cell.cell_id}/").text


@pytest.mark.parametrize(
    ("first", "last"), [("2026-11-25", "2026-11-30"), ("2026-12-02", "2026-12-03")]
)
def test_an_outage_that_does_not_cover_the_run_day_justifies_nothing(
    operator, payload, deciders, first, last
):
    attempts_ingest_batch(payloads=[on_fallback(payload)], actor=operator)
    outage(1, deciders, first, last)
    assert not Attempt.objects.get().scored_eligible


def test_an_outage_of_the_fallback_itself_justifies_nothing(operator, payload, deciders):
    attempts_ingest_batch(payloads=[on_fallback(payload)], actor=operator)
    outage(2, deciders, "2026-12-01", "2026-12-01")
    assert not Attempt.objects.get().scored_eligible


def test_a_later_fallback_needs_every_platform_above_it_down(operator, payload, deciders):
    """The fallbacks are ordered: the third is used only when the first two are down."""
    if kr_set().platforms.count() < 3:
        third = kr_set().platforms.get(rank=2)
        third.pk = third.id = None
        third.rank, third.name_en = 3, "Nate Mail"
        PlatformRegistration.objects.get(pk=kr_set().pk).platforms.model.objects.bulk_create(
            [third]
        )
    attempts_ingest_batch(payloads=[on_fallback(payload, rank=3)], actor=operator)
    outage(1, deciders, "2026-12-01", "2026-12-01")
    assert not Attempt.objects.get().scored_eligible
    outage(2, deciders, "2026-11-30", "2026-12-01")
    assert Attempt.objects.get().scored_eligible


# --- The demo runs ----------------------------------------------------------------------


def test_the_demo_runs_use_each_market_and_familys_pre_registered_primary(canonical_content):
    """The labelled synthetic runs stay valid: they name the shipped sets' primaries, seen
    after the sets were frozen (the decision in docs/reference/gate.md)."""
    call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    demo = Attempt.objects.all()
    assert demo.exists()
    assert demo.filter(representative_platform__rank=1).count() == demo.count()


def test_the_demo_runs_are_refused_by_name_without_a_frozen_set(canonical_content):
    PlatformRegistration.objects.filter(
        market_edition__market__code="KR", task_family="email-calendar"
    ).update(status="draft")
    with pytest.raises(CommandError, match="platform-unregistered"):
        call_command("load_demo_runs", stdout=open("/dev/null", "w"))
    assert not Attempt.objects.exists()
