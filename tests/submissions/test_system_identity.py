"""System identity and capability keys (issue 17, item 6 and the capability-key finding).

Systems get a slug of their own at acceptance; two systems never merge by name. The
capability keys a submission declares are short identifiers, bounded in number, and
NUL is refused everywhere: 400, never 500 (run on PostgreSQL too, where NUL broke).
"""

import json

import pytest

from mica.errors import ValidationFailed
from submissions.models import System, SystemSubmission
from submissions.system_submissions import system_submission_decide, system_submission_file
from tests.factories import StaffFactory, system_submission_payload

pytestmark = pytest.mark.django_db

BASE = system_submission_payload()


def accepted(**changes):
    submission = system_submission_file(payload={**BASE, **changes})
    decided = system_submission_decide(
        submission_id=submission.pk,
        accept=True,
        reason="Complete declaration.",
        actor=StaffFactory(),
    )
    return decided.snapshot.system


def test_two_korean_named_systems_of_different_operators_stay_two(client, canonical_content):
    """Finding: /systems/ answered 500 for everyone after a system whose name has no
    ASCII letters was accepted, and two Korean-named systems of different operators
    were merged into one."""
    first = accepted(name="에이전트", operator="하버 랩스")
    second = accepted(name="에이전트", operator="서울 에이아이", contact_email="ops@seoul.example")
    assert first.pk != second.pk and System.objects.filter(name="에이전트").count() == 2
    assert first.slug != second.slug
    assert {first.slug, second.slug} == {"system", "system-2"}
    assert first.snapshots.count() == 1 and second.snapshots.count() == 1
    for prefix in ("", "/ko"):
        listing = client.get(f"{prefix}/systems/")
        assert listing.status_code == 200
        for system in (first, second):
            assert f"/systems/{system.slug}/" in listing.text
            page = client.get(f"{prefix}/systems/{system.slug}/")
            assert page.status_code == 200 and "에이전트" in page.text
            assert system.operator in page.text


@pytest.mark.parametrize("name", ["agent_one", "__", "Agent One", "Ágent Øne", "🤖"])
def test_any_name_gives_a_page(client, canonical_content, name):
    """Finding: a name with `_` made /systems/ answer 500."""
    system = accepted(name=name)
    assert system.name == name
    for prefix in ("", "/ko"):
        assert client.get(f"{prefix}/systems/").status_code == 200
        assert client.get(f"{prefix}/systems/{system.slug}/").status_code == 200


def test_the_same_name_from_the_same_operator_is_numbered_not_merged(canonical_content):
    """Finding: systems merged by name; the record is the identity, the name only a label."""
    slugs = [accepted(name="Harbor Agent", version=f"{n}.0").slug for n in range(1, 4)]
    assert slugs == ["harbor-agent", "harbor-agent-2", "harbor-agent-3"]


def _post(client, language="en", **changes):
    return client.post(
        "/api/v1/system-submissions/",
        json.dumps({**BASE, **changes}),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE=language,
    )


@pytest.mark.parametrize(
    "capability",
    [
        {"K" * 200_000: "x"},  # a 200,000-character key was stored
        {"KR\x00": "x"},  # a key with NUL answered 500 on PostgreSQL
        {"KR": "web\x00app"},
        {"": "x"},
        {"-KR": "x"},
        {"KR\n": "x"},
        {"시장": "x"},
        {"<script>": "x"},
        {f"m{n}": "x" for n in range(51)},
        {"KR": "x" * 2001},
    ],
    ids=[
        "huge-key",
        "nul-key",
        "nul-value",
        "empty-key",
        "leading-hyphen",
        "newline",
        "hangul",
        "markup",
        "too-many",
        "long-value",
    ],
)
@pytest.mark.parametrize("language", ["en", "ko"])
def test_capability_keys_are_short_identifiers(client, canonical_content, capability, language):
    """Finding: system-submission capability keys were unchecked (a 200,000-character
    key was stored; a key with NUL answered 500 on PostgreSQL)."""
    response = _post(client, language, market_capability=capability)
    assert response.status_code == 400, response.content
    assert not SystemSubmission.objects.exists()
    # The service refuses it whatever reached it (the JSON parser may refuse a huge key
    # before the service sees it), and names the field.
    with pytest.raises(ValidationFailed) as refused:
        system_submission_file(payload={**BASE, "market_capability": capability})
    assert "market_capability" in refused.value.field_errors
    assert len(str(refused.value.field_errors)) < 2000  # no huge key echoed back


def test_nul_is_refused_in_every_text_field(client, canonical_content):
    """Finding: NUL answered 500 on PostgreSQL; every field refuses it with a 400."""
    for field in ("name", "operator", "version", "orchestrator", "memory", "access"):
        assert _post(client, **{field: "a\x00b"}).status_code == 400, field
    assert _post(client, routable_models=["a\x00b"]).status_code == 400
    assert _post(client, tools=["a\x00b"]).status_code == 400
    assert _post(client, **{"extra\x00": "x"}).status_code in (201, 400)
    assert not SystemSubmission.objects.exclude(name=BASE["name"]).exists()


def test_ordinary_capabilities_are_kept(client, canonical_content):
    capability = {"KR": "signed-in web and app", "jp.line-app_v2": "LINE mini app"}
    assert _post(client, market_capability=capability).status_code == 201
    assert SystemSubmission.objects.get().market_capability == capability
