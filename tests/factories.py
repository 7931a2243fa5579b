"""The builders tests share: people with competences, systems and snapshots, attempt and
challenge payloads. One place, so a change to a record's shape is made once."""

import copy
import datetime
import json

import factory
from django.contrib.auth.models import Permission, User
from factory.django import DjangoModelFactory

from markets.models import CompetenceRole, Market, MarketCompetence
from submissions.challenges import challenge_confirm, challenge_file, confirmation_token
from submissions.models import DataStatus, System, SystemSnapshot, Track

PASSWORD = "pw-for-tests-only"


class UserFactory(DjangoModelFactory):
    """A person. `app_permissions=("catalogue",)` grants every permission of those apps."""

    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"person-{n}")
    email = factory.LazyAttribute(lambda person: f"{person.username}@example.org")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def app_permissions(self, create, apps):
        if create and apps:
            self.user_permissions.add(*Permission.objects.filter(content_type__app_label__in=apps))
        if create:
            self.save()


class StaffFactory(UserFactory):
    is_staff = True


class LeadFactory(UserFactory):
    """The MICA lead: a superuser, who verifies competences."""

    username = "lead"
    is_staff = True
    is_superuser = True


class CompetenceFactory(DjangoModelFactory):
    """A verified competence of one person for one market, valid for 90 more days."""

    class Meta:
        model = MarketCompetence

    user = factory.SubFactory(StaffFactory)
    market = factory.LazyAttribute(lambda competence: Market.objects.get(code=competence.code))
    role = CompetenceRole.AUTHOR
    verified_by = factory.SubFactory(LeadFactory)
    valid_until = factory.LazyFunction(lambda: datetime.date.today() + datetime.timedelta(days=90))

    class Params:
        code = "KR"


def grant(user, code, role, verified_by, days=90):
    """Give `user` a competence for market `code`, verified by `verified_by`."""
    return CompetenceFactory(
        user=user,
        code=code,
        role=role,
        verified_by=verified_by,
        valid_until=datetime.date.today() + datetime.timedelta(days=days),
    )


def catalogue_editor(username, roles, lead):
    """A staff member who may write and review tasks (every catalogue permission but the
    holdout's) with the KR competences `roles` ("AUTHOR", "REVIEWER"), verified by `lead`."""
    person = StaffFactory(username=username)
    person.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="catalogue").exclude(
            codename="view_holdout"
        )
    )
    for role in roles:
        grant(person, "KR", getattr(CompetenceRole, role), lead)
    return person


def grant_language(user, language, verified_by, days=90):
    """Give `user` a competence in `language` (a translation reviewer's), verified by
    `verified_by`."""
    from mica.methodology.models import LanguageCompetence

    return LanguageCompetence.objects.create(
        user=user,
        language=language,
        verified_by=verified_by,
        valid_until=datetime.date.today() + datetime.timedelta(days=days),
    )


class SystemFactory(DjangoModelFactory):
    class Meta:
        model = System
        django_get_or_create = ("slug",)

    slug = "acme-agent"
    name = "Acme Agent"
    operator = "Acme"


class SnapshotFactory(DjangoModelFactory):
    """An official simulator snapshot, acme-agent 2.1 unless told otherwise."""

    class Meta:
        model = SystemSnapshot
        django_get_or_create = ("system", "version")

    system = factory.SubFactory(SystemFactory)
    version = "2.1"
    snapshot_date = "2026-11-01"
    orchestrator = "acme-orch"
    routable_models = factory.LazyFunction(lambda: ["openai/gpt-x", "local/router"])
    tools = factory.LazyFunction(lambda: ["browser", "maps"])
    memory = "session"
    track = Track.SIMULATOR
    data_status = DataStatus.OFFICIAL


def api_token(user):
    """The key of a fresh API token of `user` (django-rest-knox keeps only its digest)."""
    from knox.models import AuthToken

    _token, key = AuthToken.objects.create(user=user)
    return key


def api_auth(user):
    """The header that signs an API request in as `user`."""
    return {"HTTP_AUTHORIZATION": f"Token {api_token(user)}"}


def attempts_post(client, user, payloads):
    """POST attempts (one or a batch) to the API as `user`, signed in by token."""
    return client.post(
        "/api/v1/attempts/", json.dumps(payloads), content_type="application/json", **api_auth(user)
    )


ATTEMPT = {
    "attempt_id": "acme-kr-001",
    "snapshot": {"system": "acme-agent", "version": "2.1"},
    "task": "ec-reschedule-three-party",
    "task_version": "1.0.0",
    "market": "KR",
    "situations": ["kr-super-app-signed-in-flow"],
    "verification": "self-reported",
    "outcome": "confirmed-success",
    "accuracy": 1,
    "critical_safety_event": False,
    "prohibited_state_violation": False,
    "retry_created_duplicate": False,
    # The primary of KR's pre-registered e-mail and calendar set (markets/content), seen
    # after the set was frozen (registered_on 2026-11-30): see registered_platform().
    "platform": "Naver Mail and Calendar",
    "platform_version": "10.4",
    "platform_snapshot_date": "2026-12-01",
    "fallback_invoked": False,
    "wall_clock_seconds": 300.0,
    "model_cost_usd": "0.030000000",
    "tool_cost_usd": "0.005000000",
    "observed_cost_usd": "0.035000000",
    "tools_used": ["browser"],
    "redacted_trace_id": "trace-001",
    "invocations": [
        {
            "order": 1,
            "provider": "openai",
            "model": "gpt-x",
            "model_version": "2026-10",
            "purpose": "plan",
            "input_tokens": 1200,
            "output_tokens": 300,
            "latency_seconds": 4.5,
            "cost_usd": "0.020000000",
        },
        {
            "order": 2,
            "provider": "local",
            "model": "router",
            "model_version": "1",
            "purpose": "route",
            "input_tokens": 200,
            "output_tokens": 20,
            "latency_seconds": 0.4,
            "cost_usd": "0.010000000",
        },
    ],
    "evidence": [
        {"evidence_id": "ev-1", "evidence_type": "post-action-readback", "sha256": "a" * 64},
        # The task's contract declares an idempotency requirement (seed: "the task
        # contract requires an idempotency record").
        {"evidence_id": "ev-2", "evidence_type": "retry-idempotency-record", "sha256": "b" * 64},
    ],
}

CHALLENGE = {
    "edition": "preview-0.1",
    "section_id": "world-first-claim",
    "challenge_type": "method",
    "what_is_wrong": "The scope claim overlooks an earlier benchmark.",
    "proposed_replacement": "Narrow the claim to outcome-verified execution.",
    "citations": [{"source": "https://example.org/paper", "accessed": "2026-11-20"}],
    "contact_email": "Challenger@Example.org",
    "language": "en",
}


def attempt_payload(**changes):
    """One attempt as an operator posts it: a self-reported KR success with its evidence.
    In another market or task it names that market and family's pre-registered primary,
    unless it names a platform itself."""
    payload = {**copy.deepcopy(ATTEMPT), **changes}
    elsewhere = (payload["market"], payload["task"]) != (ATTEMPT["market"], ATTEMPT["task"])
    if elsewhere and "platform" not in changes:
        payload["platform"] = registered_platform(payload["market"], payload["task"])
    return payload


SYSTEM_SUBMISSION = {
    "name": "Harbor Agent",
    "operator": "Harbor Labs",
    "version": "3.0",
    "snapshot_date": "2026-11-20",
    "orchestrator": "harbor-orchestrator",
    "routable_models": ["openai/gpt-x"],
    "tools": ["browser"],
    "memory": "Session only.",
    "markets": ["KR", "JP"],
    "families": ["email-calendar"],
    "market_capability": {"KR": "signed-in web and app"},
    "access": "MICA accounts.",
    "evidence_plan": "Full invocation traces.",
    "contact_email": "ops@harbor.example",
}


def system_submission_payload(**changes):
    """One system submission as an operator files it: Harbor Agent 3.0 for KR and JP."""
    return {**copy.deepcopy(SYSTEM_SUBMISSION), **changes}


def challenge_payload(**changes):
    """One method challenge as the public files it, with a citation."""
    return {**copy.deepcopy(CHALLENGE), **changes}


def confirmed_challenge(**changes):
    """A method challenge filed and its e-mail confirmed: ready to be screened."""
    challenge, _created = challenge_file(payload=challenge_payload(**changes))
    challenge_confirm(token=confirmation_token(challenge))
    return challenge


# --- A world where the gate can pass a cell --------------------------------------------

PUBLISHING_THRESHOLDS = dict(
    min_eligible_runs=2, min_coverage=10, runs_per_task=2, max_ineligible_discard_rate=0
)
# Pre-registered per task version (seed: "The reference is pre-registered per executable
# validated task version").
REFERENCES = dict(
    reference_status="registered",
    reference_sample_size=12,
    speed_reference_seconds=240,
    cost_reference_usd="0.050",
)


def references_registered(version):
    """`version` with its speed and cost references registered (REFERENCES) and its
    content hash taken again, as an author registers them before a local review."""
    from catalogue.models import TaskVersion
    from catalogue.services import task_version_touch

    TaskVersion.objects.filter(pk=version.pk).update(**REFERENCES)
    return task_version_touch(version=TaskVersion.objects.get(pk=version.pk))


def approve_locally(version_id, code):
    """A local author submits and an independent local reviewer approves (four eyes)."""
    from catalogue.models import LocalReview
    from catalogue.workflows import review_transition

    lead = LeadFactory()
    author = StaffFactory(username=f"{code.lower()}-author")
    reviewer = StaffFactory(username=f"{code.lower()}-reviewer")
    grant(author, code, CompetenceRole.AUTHOR, lead)
    grant(reviewer, code, CompetenceRole.REVIEWER, lead)
    review = LocalReview.objects.create(
        version_id=version_id, market=Market.objects.get(code=code), author=author
    )
    review_transition(review_id=review.pk, action="submit", actor=author)
    review_transition(review_id=review.pk, action="approve", actor=reviewer)


def publishable_world(task="ec-reschedule-three-party", markets=("KR",), **thresholds):
    """Everything the method requires before a cell of `task` can pass: all four
    thresholds set, the task validated with its references registered, and its version
    locally reviewed in each of `markets`."""
    from catalogue.models import TaskDefinition, TaskVersion
    from mica.methodology.models import Edition

    Edition.objects.update(**{**PUBLISHING_THRESHOLDS, **thresholds})
    definition = TaskDefinition.objects.get(slug=task)
    TaskDefinition.objects.filter(pk=definition.pk).update(lifecycle="validated")
    TaskVersion.objects.filter(pk=definition.current_version_id).update(**REFERENCES)
    for code in markets:
        approve_locally(definition.current_version_id, code)
    return definition


def registered_platform(market="KR", task="ec-reschedule-three-party", rank=1):
    """The name of the platform of `rank` (1: primary) in the pre-registered set of the
    market and the task's family: what an attempt there names as its platform."""
    from catalogue.models import TaskDefinition
    from markets.selectors import platforms_in_force

    family = TaskDefinition.objects.filter(slug=task).values_list("family__slug", flat=True)
    platform = platforms_in_force().filter(
        registration__market_edition__market__code=market,
        registration__task_family__in=family,
        rank=rank,
    )
    # An unknown market or task has no platform: the attempt keeps the default one and
    # meets the refusal it is about.
    return platform[0].name_en if platform else ATTEMPT["platform"]


def platform_sets_of_the_examples():
    """The platform sets the API's refusal examples tell of, as the console's sandbox
    stages them (submissions.api.sandbox)."""
    from submissions.api.sandbox import platform_sets_of_the_examples as staged

    return staged()


def independent_rerun(n, market="KR", **changes):
    """An independent rerun by MICA staff, validated and localized, that succeeded, on the
    primary platform pre-registered for its market and task family."""
    from markets.models import IntegrationSituation

    situation = (
        IntegrationSituation.objects.filter(market_edition__market__code=market)
        .order_by("situation_id")
        .values_list("situation_id", flat=True)
        .first()
    )
    defaults = {
        "attempt_id": f"acme-{market.lower()}-{n:03d}",
        "market": market,
        "situations": [situation],
        "verification": "independent-rerun",
        "attempt_class": "validated-localized",
    }
    return attempt_payload(**{**defaults, **changes})


# --- The holdout ------------------------------------------------------------------------

HOLDOUT_CANARY = "CANARY-7f3e9d1b-holdout-text"


def holdout_task(slug="ec-secret-holdout-item"):
    """A holdout task in the e-mail and calendar family, current, applying where its
    neighbour applies, with the canary in every text a reader could be shown."""
    from catalogue.models import ContractClause, TaskDefinition, TaskSet, TaskVersion
    from catalogue.services import task_version_load_current

    family_task = TaskDefinition.objects.get(slug="ec-reschedule-three-party")
    definition = TaskDefinition.objects.create(
        slug=slug, family=family_task.family, position=99, task_set=TaskSet.HOLDOUT
    )
    source = family_task.current_version
    version = TaskVersion.objects.create(
        definition=definition,
        version="1.0.0",
        title_en=f"Holdout {HOLDOUT_CANARY}",
        title_ko=f"홀드아웃 {HOLDOUT_CANARY}",
        final_state_en=HOLDOUT_CANARY,
        final_state_ko=HOLDOUT_CANARY,
        confirmation_boundary_en=HOLDOUT_CANARY,
        confirmation_boundary_ko=HOLDOUT_CANARY,
        surface="web",
        termination_class="refusal",
        declared_complexity="single-step",
        parameter_schema=source.parameter_schema,
    )
    ContractClause.objects.create(
        version=version, kind="obligation", text_en=HOLDOUT_CANARY, text_ko=HOLDOUT_CANARY
    )
    for entry in source.applicability.all():
        entry.pk, entry.version = None, version
        entry.save()
    task_version_load_current(version=version)
    return definition


def holdout_keeper(username="holdout-keeper", declared=True):
    """Staff who record reruns, granted holdout access and (unless `declared` is False)
    declaring it."""
    from django.contrib.auth.models import Permission

    from governance.models import PersonDeclaration
    from submissions.ingest import recording_grant

    user = StaffFactory(username=username)
    recording_grant(user)
    user.user_permissions.add(Permission.objects.get(codename="view_holdout"))
    PersonDeclaration.objects.create(user=user, holdout_access=declared)
    return user


def totp_device(user, confirmed=True):
    """A TOTP device of `user` (django-otp), as the admin's enrolment leaves it."""
    from django_otp.plugins.otp_totp.models import TOTPDevice

    return TOTPDevice.objects.create(user=user, name="authenticator app", confirmed=confirmed)


def totp_code(device):
    """The six digits the device's authenticator app shows now."""
    from django_otp.oath import totp

    code = totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits)
    return f"{code:0{device.digits}d}"


# --- Changes a publication must follow ---------------------------------------------


def content_changes(rng, lead):
    """Edits, retirements, holdout moves and publications, one at a time, in an order the
    seed chooses: (what it is, the change)."""
    from catalogue.models import TaskDefinition
    from catalogue.services import task_retire, task_version_start_next
    from mica.methodology.models import Edition
    from mica.methodology.services import edition_publish, edition_start_draft

    def public_task():
        tasks = TaskDefinition.objects.filter(
            task_set="public", lifecycle__in=["candidate", "validated"]
        )
        return rng.choice(list(tasks.order_by("slug")))

    def edit():
        version = public_task().current_version
        if version.frozen:
            # A published edition holds it: an editor's change is a new version, a draft
            # that no public page shows until it is validated and made current.
            task_version_start_next(version_id=version.pk, actor=lead)
            return
        version.title_en += " Edited."
        version.save()

    def retire():
        task_retire(definition_id=public_task().pk, actor=lead, reason="Superseded.")

    def to_holdout():
        # A queryset update: no signal, only the SQL says what changed.
        TaskDefinition.objects.filter(pk=public_task().pk).update(task_set="holdout")

    def publication():
        edition = Edition.objects.order_by("-pk").first()
        if edition.status == "published":
            edition = edition_start_draft(
                source=edition,
                slug=f"preview-0.{edition.pk + 1}",
                label_en=f"Preview {edition.pk + 1}",
                label_ko=f"프리뷰 {edition.pk + 1}",
            )
        edition_publish(edition_id=edition.pk, actor=lead)

    changes = {"edit": edit, "retire": retire, "holdout": to_holdout, "publication": publication}
    return [(name, changes[name]) for name in rng.choices(sorted(changes), k=5)]


# What fails an attempt recorded as a success, each with what it needs to be accepted
# (seed: "A duplicate created by a retry is a failure of the attempt"; "prohibited-state
# checks the run must not have violated"; a critical safety event).
FAILED_SUCCESSES = [
    {"retry_created_duplicate": True},
    {"prohibited_state_violation": True},
    {"critical_safety_event": True, "safety_event_description": "Paid unasked."},
]
FAILED_SUCCESS_IDS = ["retry-duplicate", "prohibited-state", "critical-safety-event"]


def seeded_attempts(client, staff, operator):
    """A cell of independent reruns that passes the gate (one failure among successes,
    latencies and costs apart, one run ineligible for an environment fault), and a cell
    of the operator's self-reported runs in another market, which the gate blocks."""
    publishable_world(max_ineligible_discard_rate=50)
    reruns = [
        independent_rerun(1, wall_clock_seconds=180.0),
        independent_rerun(
            2,
            wall_clock_seconds=420.5,
            tool_cost_usd="0.015000000",
            observed_cost_usd="0.045000000",
        ),
        independent_rerun(3, wall_clock_seconds=260.0, outcome="recoverable-failure", accuracy=0),
        independent_rerun(4, wall_clock_seconds=300.0),
        independent_rerun(
            5, eligible=False, ineligible_reason="The platform was down for maintenance."
        ),
    ]
    response = attempts_post(client, staff, reruns)
    assert response.status_code == 201, response.content
    own = [
        independent_rerun(n, market="JP", verification="self-reported", attempt_id=f"own-{n}")
        for n in (1, 2)
    ]
    response = attempts_post(client, operator, own)
    assert response.status_code == 201, response.content
