"""A task's life in the admin: made current, retired, edited through widgets, found by
autocomplete, and its English change since the Korean approval shown.

Issue 19: "a task's life (draft → local review with four eyes → validated → current
version → public page, and retirement with a reason) runs as workflow actions in the
admin, each refusal stated in the editor's language."
"""

import pytest
from django.utils import translation

from catalogue.models import LocalReview, MarketApplicability, TaskEvent, TaskVersion
from catalogue.services import (
    task_promote,
    task_retire,
    task_version_make_current,
    task_version_touch,
)
from catalogue.workflows import review_transition
from markets.models import Market
from mica.errors import InvalidTransition, PermissionRefused, ValidationFailed
from tests.census import form_data
from tests.factories import StaffFactory, holdout_keeper, holdout_task

pytestmark = pytest.mark.django_db


def next_version(version, number="1.1.0", **changes):
    """A copy of `version` under `number`, its clauses and applicability with it."""
    clauses, applicability = list(version.clauses.all()), list(version.applicability.all())
    copy = TaskVersion.objects.get(pk=version.pk)
    copy.pk, copy.version = None, number
    for field, value in changes.items():
        setattr(copy, field, value)
    copy.save()
    for part in [*clauses, *applicability]:
        part.pk, part.version = None, copy
        part.save()
    return task_version_touch(version=copy)


def reviewable(version):
    """References registered and only Korea applying: one review is the whole review rule."""
    TaskVersion.objects.filter(pk=version.pk).update(
        reference_status="registered",
        reference_sample_size=12,
        speed_reference_seconds=240,
        cost_reference_usd="0.4200",
    )
    MarketApplicability.objects.filter(version=version).exclude(market__code="KR").update(
        status="not-applicable"
    )
    return task_version_touch(version=TaskVersion.objects.get(pk=version.pk))


def approve_in_korea(version, people):
    review = LocalReview.objects.create(
        version=version, market=Market.objects.get(code="KR"), author=people["author"]
    )
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    review_transition(review_id=review.pk, action="approve", actor=people["reviewer"])


def test_a_version_is_made_current_only_by_the_rules(people, task):
    """PORTAL.md: promotion "needs … an approved local review in every applicable market";
    Four-eyes review: "any edit after approval voids it (approval pins a content hash)"."""
    lead = people["lead"]
    newer = reviewable(next_version(task.current_version))
    with pytest.raises(InvalidTransition) as candidate:
        task_version_make_current(version_id=newer.pk, actor=lead)
    assert "promote the task first" in candidate.value.message
    with translation.override("ko"), pytest.raises(InvalidTransition) as in_korean:
        task_version_make_current(version_id=newer.pk, actor=lead)
    assert "먼저 과제를 승격하세요" in in_korean.value.message

    approve_in_korea(newer, people)
    newer.title_en = "An edit after the approval"
    newer.save()
    task_version_touch(version=newer, actor=people["author"])
    with pytest.raises(ValidationFailed) as voided:
        task_promote(definition_id=task.pk, actor=lead, version_id=newer.pk)
    assert "no approved local review in KR" in voided.value.message

    approve_in_korea(newer, {**people, "reviewer": people["second_reviewer"]})
    task_promote(definition_id=task.pk, actor=lead, version_id=newer.pk)
    with pytest.raises(PermissionRefused):
        task_version_make_current(version_id=newer.pk, actor=people["author"])
    # Validated, the version's text is its number's for good: a change is a new version.
    newer.title_en = "An edit after the validation"
    with pytest.raises(InvalidTransition) as frozen:
        newer.save()
    assert "is frozen" in frozen.value.message
    task_version_make_current(version_id=newer.pk, actor=lead)
    task.refresh_from_db()
    assert task.current_version_id == newer.pk and task.lifecycle == "validated"
    assert list(TaskEvent.objects.filter(definition=task).values_list("action", "version")) == [
        ("promote", newer.pk),
        ("make_current", newer.pk),
    ]
    assert task.history.first().current_version_id == newer.pk
    with pytest.raises(InvalidTransition):
        task_version_make_current(version_id=newer.pk, actor=lead)


def test_retirement_needs_a_reason_and_leaves_the_catalogue_but_not_the_record(
    client, people, task
):
    """Issue 19: "Retirement with a reason must hide the task from the public catalogue
    (and keep its history)"."""
    with translation.override("ko"), pytest.raises(ValidationFailed) as no_reason:
        task_retire(definition_id=task.pk, actor=people["lead"], reason="  ")
    assert "이유" in no_reason.value.message
    with pytest.raises(PermissionRefused):
        task_retire(definition_id=task.pk, actor=people["author"], reason="Duplicate.")
    assert f"/tasks/{task.slug}/" in client.get("/tasks/").text
    revisions = task.history.count()
    task_retire(definition_id=task.pk, actor=people["lead"], reason="A duplicate of another.")
    task.refresh_from_db()
    assert task.lifecycle == "retired"
    assert task.events.get().reason == "A duplicate of another."
    assert task.history.count() == revisions + 1
    assert task.history.first().history_change_reason == "A duplicate of another."
    assert f"/tasks/{task.slug}/" not in client.get("/tasks/").text
    assert f"/tasks/{task.slug}/" not in client.get("/sitemap.xml").text
    assert client.get(f"/tasks/{task.slug}/").status_code == 200
    with pytest.raises(InvalidTransition):
        task_retire(definition_id=task.pk, actor=people["lead"], reason="Again.")


def test_retiring_in_the_admin_asks_for_the_reason(client, people, task):
    client.force_login(people["lead"])
    ask = client.post(
        "/ko/admin/catalogue/taskdefinition/",
        {"action": "retire", "_selected_action": [task.pk]},
    )
    assert ask.status_code == 200 and "폐기 이유" in ask.text
    empty = client.post(
        "/admin/catalogue/taskdefinition/",
        {"action": "retire", "_selected_action": [task.pk], "confirm": "yes", "reason": ""},
    )
    assert empty.status_code == 200 and "This field is required." in empty.text
    task.refresh_from_db()
    assert task.lifecycle == "candidate"
    done = client.post(
        "/admin/catalogue/taskdefinition/",
        {"action": "retire", "_selected_action": [task.pk], "confirm": "yes", "reason": "Stale."},
        follow=True,
    )
    assert f"{task.slug} is retired." in done.text.lower()
    assert client.get(f"/admin/catalogue/taskdefinition/{task.pk}/change/").text.count("Stale.")


def _widget_data(form, name):
    """What a browser posts for one field of `form`, read from its rendered widget."""
    from tests.census import page_forms

    html = f"<form method='post'>{form[name]}</form>"
    data = {}
    for key, value in page_forms(html)[0]["fields"]:
        data.setdefault(key, []).append(value)
    return {key: values if len(values) > 1 else values[0] for key, values in data.items()}


def test_every_canonical_version_round_trips_through_its_widgets():
    """Issue 19: structured fields as widgets; "round-trip must not lose data"."""
    from django.forms import modelform_factory

    from catalogue.admin_forms import TaskVersionAdminForm

    structured = ("evidence_requirements", "diagnostic_axes", "locality_conditions")
    form_class = modelform_factory(
        TaskVersion, form=TaskVersionAdminForm, fields=[*structured, "parameter_schema"]
    )
    versions = TaskVersion.objects.order_by("pk")
    assert versions.count() >= 100
    for version in versions:
        shown = form_class(instance=version)
        data = {}
        for name in (*structured, "parameter_schema"):
            data.update(_widget_data(shown, name))
        form = form_class(data, instance=version)
        for name in (*structured, "parameter_schema"):
            field = form.fields[name]
            value = field.widget.value_from_datadict(data, {}, name)
            if name in structured:
                field.keep(getattr(version, name))
                value = data.get(name, [])
                value = value if isinstance(value, list) else [value]
            assert field.clean(value) == getattr(version, name), (version, name)


def test_versions_round_trip_through_the_change_form(client, people):
    """The same through the admin's page, a version of each family: the content hash
    (what reviews approve) stays, and history keeps recording."""
    client.force_login(people["lead"])
    sample = TaskVersion.objects.order_by("definition__family", "pk").distinct()[::10]
    assert len(sample) >= 10
    for version in sample:
        url = f"/admin/catalogue/taskversion/{version.pk}/change/"
        page = client.get(url)
        assert "Enter a valid JSON" not in page.text
        saved = client.post(url, form_data(page.text))
        assert saved.status_code == 302, (version, saved.context["adminform"].form.errors)
        after = TaskVersion.objects.get(pk=version.pk)
        for field in ("content_hash", "parameter_schema", "evidence_requirements"):
            assert getattr(after, field) == getattr(version, field), (version, field)
        assert after.history.count() >= 2


def test_parameters_are_added_and_removed_as_rows_and_refused_in_the_editors_language(
    client, people, task
):
    version = task.current_version
    url = f"/admin/catalogue/taskversion/{version.pk}/change/"
    client.force_login(people["lead"])
    data = form_data(client.get(url).text)
    first = data["parameter_schema-0-name"]
    count = len(version.parameter_schema)
    data[f"parameter_schema-{count}-name"] = "party_size"
    data[f"parameter_schema-{count}-type"] = "integer"
    data[f"parameter_schema-{count}-min"] = "5"
    data[f"parameter_schema-{count}-max"] = "2"
    data[f"parameter_schema-{count}-description_en"] = "People in the party."
    refused = client.post("/ko" + url, data)
    assert refused.status_code == 200
    assert "최솟값이 최댓값보다 큽니다" in refused.text
    assert "Enter a valid JSON" not in refused.text
    data[f"parameter_schema-{count}-min"] = "1"
    data[f"parameter_schema-{count}-description_ko"] = "일행 인원입니다."
    data["parameter_schema-0-delete"] = "on"
    assert client.post(url, data).status_code == 302
    version.refresh_from_db()
    names = [parameter["name"] for parameter in version.parameter_schema]
    assert first not in names and names[-1] == "party_size" and len(names) == count
    assert version.parameter_schema[-1] == {
        "name": "party_size",
        "type": "integer",
        "min": 1,
        "max": 2,
        "description": {"en": "People in the party.", "ko": "일행 인원입니다."},
    }


def test_the_english_change_since_the_korean_approval_is_marked(client, people, task):
    """Issue 19: "Korean and English side by side on one screen for every translated
    field, with the English source's change since the Korean approval highlighted"."""
    version = reviewable(task.current_version)
    approve_in_korea(version, people)
    url = f"/admin/catalogue/taskversion/{version.pk}/change/"
    client.force_login(people["lead"])
    page = client.get(url)
    assert "field-title_en field-title_ko" in page.text
    assert "<ins>" not in page.text
    version.title_en = version.title_en + " within a week"
    version.save()
    page = client.get(url)
    assert "The English changed after the Korean was approved" in page.text
    assert "<ins> within a week</ins>" in page.text


def test_autocomplete_never_offers_a_holdout_task_without_the_capability(client, people):
    """README, Staff accounts: without the capability "a holdout task does not exist for
    them: not in the admin's lists, search, forms"."""
    holdout_task("ec-secret-holdout-item")
    staff = StaffFactory(username="catalogue-editor", app_permissions=("catalogue",))
    staff.user_permissions.remove(*staff.user_permissions.filter(codename="view_holdout"))
    lookups = [
        "app_label=catalogue&model_name=localreview&field_name=version&term=secret",
        "app_label=catalogue&model_name=taskversion&field_name=definition&term=secret",
        "app_label=catalogue&model_name=exposureentry&field_name=definition&term=secret",
    ]
    client.force_login(staff)
    for query in lookups:
        answer = client.get(f"/admin/autocomplete/?{query}")
        assert answer.status_code == 200, query
        assert answer.json()["results"] == [], query
    public = client.get(
        "/admin/autocomplete/?app_label=catalogue&model_name=localreview"
        "&field_name=version&term=ec-reschedule"
    )
    assert public.json()["results"]
    keeper = holdout_keeper()
    keeper.user_permissions.add(*staff.user_permissions.all())
    client.force_login(type(keeper).objects.get(pk=keeper.pk))
    for query in lookups:
        answer = client.get(f"/admin/autocomplete/?{query}").json()["results"]
        assert [r["text"] for r in answer if "ec-secret-holdout-item" in r["text"]], query


@pytest.mark.parametrize("state", ["candidate", "validated", "retired"])
@pytest.mark.parametrize("action", ["promote", "make_current", "retire"])
def test_every_state_and_action_of_a_tasks_life(people, task, state, action):
    """ARCHITECTURE.md: "A workflow is a table of (state, action) -> state … Test every
    pair." A pair outside the table is refused as a transition, whatever the rules say."""
    from catalogue.models import TaskDefinition
    from catalogue.workflows import TASK_TRANSITIONS, task_transition

    TaskDefinition.objects.filter(pk=task.pk).update(lifecycle=state)
    newer = next_version(task.current_version)
    try:
        task_transition(
            definition_id=task.pk,
            action=action,
            actor=people["lead"],
            version_id=newer.pk,
            reason="Checked.",
        )
    except InvalidTransition:
        assert (state, action) not in TASK_TRANSITIONS
    except ValidationFailed:
        assert (state, action) in TASK_TRANSITIONS  # allowed, but the version has gaps
    else:
        assert (state, action) in TASK_TRANSITIONS
        assert (
            TaskDefinition.objects.get(pk=task.pk).lifecycle
            == TASK_TRANSITIONS[(state, action)].target
        )
