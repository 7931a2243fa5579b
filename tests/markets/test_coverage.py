"""The integration-profile minimums, one gap at a time, and the rules on situation ids."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.utils import translation

from markets.models import IntegrationSituation, MarketEdition
from markets.services import coverage_audit, situation_errors

pytestmark = pytest.mark.django_db


def situation(n, surfaces, boundary, completion, recovery, evidence):
    return IntegrationSituation(
        situation_id=f"kr-case-{n}",
        surfaces=surfaces,
        authorization_boundary=boundary,
        completion_semantics=completion,
        recovery_conditions=recovery,
        evidence_types=evidence,
    )


def complete_profile():
    return [
        situation(
            1,
            ["open-web"],
            "session-only",
            "synchronous-confirmed",
            ["partial-success"],
            ["tool-call-lineage"],
        ),
        situation(
            2,
            ["signed-in-app"],
            "otp",
            "asynchronous-pending",
            ["channel-unavailable"],
            ["authoritative-response"],
        ),
        situation(
            3,
            ["super-app-channel"],
            "payment-approval",
            "synchronous-confirmed",
            ["duplicate-or-retry-risk"],
            ["post-action-readback"],
        ),
        situation(
            4,
            ["open-web"],
            "session-only",
            "synchronous-confirmed",
            ["partial-success"],
            ["handoff-checkpoint"],
        ),
        situation(
            5,
            ["open-web"],
            "session-only",
            "synchronous-confirmed",
            ["partial-success"],
            ["tool-call-lineage"],
        ),
    ]


def test_a_complete_profile_has_no_gap():
    audit = coverage_audit(complete_profile())
    assert audit.complete and audit.gaps == []


@pytest.mark.parametrize(
    "break_profile, gap",
    [
        (lambda p: p[:4], "situations: 4 of 5 required"),
        (
            lambda p: [setattr(s, "surfaces", ["open-web"]) for s in p[2:3]] and p,
            "surfaces: 2 of 3 required",
        ),
        (
            lambda p: [setattr(s, "authorization_boundary", "otp") for s in p[2:3]] and p,
            "authorization boundaries: 2 of 3 required",
        ),
        (
            lambda p: (
                [setattr(s, "completion_semantics", "synchronous-confirmed") for s in p] and p
            ),
            "completion semantics: 1 of 2 required",
        ),
        (
            lambda p: (
                [setattr(s, "recovery_conditions", ["partial-success"]) for s in p[2:3]] and p
            ),
            "recovery conditions: 2 of 3 required",
        ),
        (
            lambda p: [setattr(s, "evidence_types", ["tool-call-lineage"]) for s in p[3:4]] and p,
            "evidence types: 3 of 4 required",
        ),
    ],
)
def test_each_minimum_broken_alone_gives_its_own_gap(break_profile, gap):
    audit = coverage_audit(break_profile(complete_profile()))
    assert audit.gaps == [gap]


def test_gap_messages_are_translated():
    with translation.override("ko"):
        gaps = coverage_audit(complete_profile()[:4]).gaps
    assert gaps == ["상황: 필요한 5개 중 4개"]


def test_situation_id_must_start_with_the_market_code(canonical_content):
    kr = MarketEdition.objects.get(market__code="KR")
    wrong = IntegrationSituation(
        market_edition=kr,
        situation_id="jp-borrowed-id",
        task_families=["email-calendar"],
        surfaces=["open-web"],
        recovery_conditions=["partial-success"],
        evidence_types=["tool-call-lineage"],
    )
    assert "situation_id" in situation_errors(wrong, "KR")
    wrong.situation_id = "kr-fresh-id"
    assert situation_errors(wrong, "KR") == {}


def test_a_repeated_situation_id_is_refused(canonical_content):
    kr = MarketEdition.objects.get(market__code="KR")
    existing = kr.situations.first()
    repeat = IntegrationSituation(
        market_edition=kr,
        situation_id=existing.situation_id,
        task_families=["email-calendar"],
        surfaces=["open-web"],
        recovery_conditions=["partial-success"],
        evidence_types=["tool-call-lineage"],
    )
    assert "already declared" in situation_errors(repeat, "KR")["situation_id"][0]


def test_unknown_vocabulary_values_are_refused(canonical_content):
    kr = MarketEdition.objects.get(market__code="KR")
    odd = IntegrationSituation(
        market_edition=kr,
        situation_id="kr-odd",
        task_families=["fishing"],
        surfaces=["telepathy"],
        recovery_conditions=[],
        evidence_types=["a", "a"],
    )
    assert set(situation_errors(odd, "KR")) == {
        "task_families",
        "surfaces",
        "recovery_conditions",
        "evidence_types",
    }


def test_a_published_edition_with_a_gap_fails_the_system_check(canonical_content):
    call_command("check")  # the loaded, draft edition passes
    kr = MarketEdition.objects.select_related("edition").get(market__code="KR")
    kr.edition.status = "published"
    kr.edition.save()
    call_command("check")  # published and complete still passes
    kr.situations.exclude(pk=kr.situations.first().pk).delete()
    with pytest.raises(SystemCheckError) as failed:
        call_command("check")
    assert "KR situations: 1 of 5 required" in str(failed.value)
