"""Issue 43, item 10, "Admin leftovers": each finding reproduced as a user meets it, over
the admin pages signed in as staff and the public pages.

"The 'WAITING' column header stacked one letter per line; raw JSON on the
system-submission and challenge pages (Korean admin too); lower-case field labels on the
version form; capitalised slugs in messages ('Ec-kr-parcel-locker-pickup is
validated.'); subjects and Atom titles naming slugs ('New MICA challenge #1 on
measurable-gap'); one subject for a submission's receipt and its decision; 'Speed and
cost references: Registered' without their values on the public task page; the
`otpauth://` address overflowing the enrolment card; the one English reason left in the
Korean admin ('The version changed after approval.')."

The two layout findings (letter stacking, overflow) are CSS: here the rule is checked on
the stylesheet the page links; the browser layer's screenshots show the layout itself.
"""

import html
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.template.loader import get_template

from catalogue.models import LocalReview, ReviewState, TaskDefinition, TaskVersion
from catalogue.services import task_version_touch
from catalogue.workflows import review_transition
from markets.models import CompetenceRole, Market
from tests.factories import LeadFactory, StaffFactory, grant, references_registered

pytestmark = pytest.mark.django_db

ADMIN_CSS = Path(settings.BASE_DIR) / "static" / "mica" / "admin.css"


def css_rule(selector):
    """The declarations of the admin stylesheet's rule(s) naming `selector`."""
    css = re.sub(r"/\*.*?\*/", "", ADMIN_CSS.read_text(), flags=re.S)
    found = []
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", css):
        if selector in [s.strip() for s in selectors.split(",")]:
            found.append(body)
    return " ".join(found)


@pytest.fixture
def people(canonical_content):
    lead = LeadFactory()
    users = {"lead": lead}
    for name in ("author", "reviewer"):
        user = StaffFactory(username=name)
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="catalogue"))
        users[name] = user
    grant(users["author"], "KR", CompetenceRole.AUTHOR, lead)
    grant(users["reviewer"], "KR", CompetenceRole.REVIEWER, lead)
    return users


@pytest.fixture
def task(canonical_content):
    return TaskDefinition.objects.select_related("current_version").get(
        slug="gc-resident-record-extract"
    )


# --- "The 'WAITING' column header stacked one letter per line" ----------------------------


def test_the_waiting_column_of_my_work_keeps_its_header_on_one_line(client, people):
    client.force_login(people["lead"])
    page = client.get("/admin/")
    assert page.status_code == 200
    assert "mica/admin.css" in page.text
    assert re.search(r'<th scope="col" class="queue-count">\s*Waiting\s*</th>', page.text)
    rule = css_rule("#work-queues .queue-count")
    assert "white-space: nowrap" in rule and "word-break: normal" in rule


# --- "the `otpauth://` address overflowing the enrolment card" -----------------------------


def test_the_otpauth_address_wraps_inside_the_enrolment_card():
    """The enrolment card extends the admin's base (which links admin.css); its address,
    one long word, may break anywhere."""
    source = get_template("admin/second_factor_enrol.html").template.source
    assert 'id="otpauth-uri"' in source
    assert '{% extends "admin/second_factor.html" %}' in source
    assert '{% extends "admin/base_site.html" %}' in (
        get_template("admin/second_factor.html").template.source
    )
    assert "mica/admin.css" in get_template("admin/base_site.html").template.source
    assert "overflow-wrap: anywhere" in css_rule("#otpauth-uri")


# --- "the one English reason left in the Korean admin" -------------------------------------


def test_a_voided_approvals_reason_reads_in_korean_in_the_korean_admin(client, people, task):
    version = references_registered(task.current_version)
    review = LocalReview.objects.create(
        version=version, market=Market.objects.get(code="KR"), author=people["author"]
    )
    review_transition(review_id=review.pk, action="submit", actor=people["author"])
    review_transition(review_id=review.pk, action="approve", actor=people["reviewer"])
    # An edit after approval, by an editor working in English, voids it.
    TaskVersion.objects.filter(pk=version.pk).update(title_en=version.title_en + " (edited)")
    task_version_touch(version=TaskVersion.objects.get(pk=version.pk), actor=people["lead"])
    review.refresh_from_db()
    assert review.state == ReviewState.VOIDED

    client.force_login(people["lead"])
    url = f"/admin/catalogue/localreview/{review.pk}/change/"
    korean = client.get("/ko" + url)
    assert korean.status_code == 200
    assert "승인 후 버전이 변경되었습니다." in korean.text
    assert "The version changed after approval." not in korean.text
    english = client.get(url)
    assert "The version changed after approval." in english.text


# --- "lower-case field labels on the version form" -----------------------------------------


def test_the_version_forms_labels_begin_with_a_capital(client, people, task):
    client.force_login(people["lead"])
    page = client.get(f"/admin/catalogue/taskversion/{task.current_version.pk}/change/")
    assert page.status_code == 200
    labels = re.findall(r"<label[^>]*>([^<]+?):?</label>", page.text)
    named = [label.strip() for label in labels if label.strip()]
    assert {"Evidence requirements", "Diagnostic axes", "Locality conditions", "Parameters"} <= {
        label.rstrip(":") for label in named
    }
    lower = [label for label in named if label[0].islower()]
    assert not lower, lower


# --- "capitalised slugs in messages" ----------------------------------------------------


def messages_of(page):
    return re.findall(r'<ul class="messagelist">(.*?)</ul>', page.text, flags=re.S)[0]


def test_a_message_names_a_task_by_its_slug_as_written(client, people, task):
    """The admin's message list capitalised every message's first letter: a message
    naming a task first read "Gc-resident-record-extract is retired."."""
    client.force_login(people["lead"])
    changelist = "/admin/catalogue/taskdefinition/"
    # Promotion refused (nothing approved yet): the refusal names the task as written.
    refused = client.post(
        changelist, {"action": "promote", "_selected_action": [task.pk]}, follow=True
    )
    shown = messages_of(refused)
    assert "gc-resident-record-extract:" in shown
    assert "Gc-resident-record-extract" not in shown
    retired = client.post(
        changelist,
        {
            "action": "retire",
            "_selected_action": [task.pk],
            "confirm": "yes",
            "reason": "Superseded by a clearer task.",
        },
        follow=True,
    )
    shown = messages_of(retired)
    assert "gc-resident-record-extract is retired." in shown
    assert "Gc-resident-record-extract" not in shown


# --- "raw JSON on the system-submission and challenge pages (Korean admin too)" ------------

RAW_JSON = re.compile(r'[\[{]\s*"')


def raw_json_shown(page):
    """JSON a reader sees on the page (its text, not the admin's own data attributes)."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", page.text, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    found = RAW_JSON.search(text)
    return found and text[found.start() - 80 : found.start() + 80]


@pytest.mark.parametrize("prefix", ["", "/ko"])
def test_a_system_submissions_declarations_read_as_a_list_not_json(
    client, people, prefix, django_capture_on_commit_callbacks
):
    from submissions.system_submissions import system_submission_file
    from tests.factories import system_submission_payload

    with django_capture_on_commit_callbacks(execute=True):
        submission = system_submission_file(payload=system_submission_payload())
    client.force_login(people["lead"])
    page = client.get(f"{prefix}/admin/submissions/systemsubmission/{submission.pk}/change/")
    assert page.status_code == 200
    assert not raw_json_shown(page), raw_json_shown(page)
    # The market capability, a mapping of market to capability, as a definition list.
    assert re.search(
        r'<dt><code translate="no">KR</code></dt><dd><span lang="">signed-in web and app</span>',
        page.text,
    )
    assert re.search(r'<li><span lang="">browser</span></li>', page.text)


@pytest.mark.parametrize(
    "prefix, citations, accessed",
    [("", "Citations", "Accessed on"), ("/ko", "인용 출처", "접속일")],
)
def test_a_challenges_citations_read_as_a_list_not_json(
    client, people, prefix, citations, accessed, django_capture_on_commit_callbacks
):
    from tests.factories import confirmed_challenge

    with django_capture_on_commit_callbacks(execute=True):
        challenge = confirmed_challenge()
    client.force_login(people["lead"])
    page = client.get(f"{prefix}/admin/submissions/challenge/{challenge.pk}/change/")
    assert page.status_code == 200
    assert not raw_json_shown(page), raw_json_shown(page)
    assert f"<dt>{citations}</dt>" in page.text
    assert f'<dt>{accessed}</dt><dd><span lang="">2026-11-20</span></dd>' in page.text
    assert '<span lang="">https://example.org/paper</span>' in page.text


# --- "'Speed and cost references: Registered' without their values on the public task page"


@pytest.mark.parametrize(
    "prefix, shown",
    [
        ("", "Registered: speed 240.00 s, cost 0.0500 USD, from a sample of 12 runs"),
        ("/ko", "등록됨: 속도 240.00초, 비용 0.0500 USD, 실행 12회 표본 기준"),
    ],
)
def test_the_public_task_page_shows_the_registered_reference_values(client, task, prefix, shown):
    references_registered(task.current_version)
    page = client.get(f"{prefix}/tasks/{task.slug}/")
    assert page.status_code == 200
    assert re.search(r"<dt>[^<]+</dt><dd>" + re.escape(shown) + "</dd>", page.text), re.findall(
        r"<dt>[^<]*</dt><dd>[^<]*(?:등록됨|Registered)[^<]*</dd>", page.text
    )


# --- "subjects and Atom titles naming slugs ('New MICA challenge #1 on measurable-gap')" ---


def claim_titles():
    from mica.methodology.models import ChapterItem

    claim = ChapterItem.objects.get(edition__slug="preview-0.1", section_id="world-first-claim")
    return " ".join(claim.term_en.split()), " ".join(claim.term_ko.split())


def test_a_new_challenges_mail_names_the_section_by_its_title(
    canonical_content, eager_celery, mailoutbox, django_capture_on_commit_callbacks
):
    from tests.factories import confirmed_challenge

    LeadFactory(email="lead@example.org")  # who screens it
    with django_capture_on_commit_callbacks(execute=True):
        challenge = confirmed_challenge()
    english, korean = claim_titles()
    (notice,) = [m for m in mailoutbox if m.to == ["lead@example.org"]]
    assert f"New MICA challenge #{challenge.pk} on “{english}”" in notice.subject[:200]
    assert f"새 MICA 이의 제기 #{challenge.pk}: “{korean}”" in notice.subject
    assert "world-first-claim" not in notice.subject


def test_the_atom_feed_titles_a_decision_by_the_sections_title(
    canonical_content, django_capture_on_commit_callbacks
):
    from mica.exports.documents import atom_entries, corrections_document
    from mica.methodology.models import Edition
    from submissions.challenges import challenge_transition
    from tests.factories import confirmed_challenge

    lead = LeadFactory()
    with django_capture_on_commit_callbacks(execute=True):
        challenge = confirmed_challenge()
        challenge_transition(
            challenge_id=challenge.pk, action="screen", reason="In scope.", actor=lead
        )
    document = corrections_document(Edition.objects.get(slug="preview-0.1"))
    entries = atom_entries(document, "https://x")
    (entry,) = [e for e in entries if f"/challenges/{challenge.pk}/#screen-" in e["id"]]
    english, korean = claim_titles()
    assert entry["title"].startswith(f"Challenge #{challenge.pk} on “{english}”: ")
    assert f" / “{korean}”에 대한 이의 제기 #{challenge.pk}: " in entry["title"]
    assert "world-first-claim" not in entry["title"]


# --- "one subject for a submission's receipt and its decision" -----------------------------


@pytest.mark.parametrize(
    "language, receipt, decision",
    [
        ("en", "Your MICA system submission #{id} received", "#{id} decided: Declined"),
        ("ko", "MICA 시스템 제출 #{id} 접수 확인", "MICA 시스템 제출 #{id} 결정: 반려됨"),
    ],
)
def test_a_submissions_receipt_and_decision_have_subjects_of_their_own(
    canonical_content,
    eager_celery,
    mailoutbox,
    django_capture_on_commit_callbacks,
    language,
    receipt,
    decision,
):
    from submissions.system_submissions import system_submission_decide, system_submission_file
    from tests.factories import system_submission_payload

    lead = LeadFactory()
    with django_capture_on_commit_callbacks(execute=True):
        submission = system_submission_file(payload=system_submission_payload(language=language))
    with django_capture_on_commit_callbacks(execute=True):
        system_submission_decide(
            submission_id=submission.pk, accept=False, reason="Out of scope.", actor=lead
        )
    subjects = [m.subject for m in mailoutbox if m.to == ["ops@harbor.example"]]
    assert len(subjects) == 2 and subjects[0] != subjects[1], subjects
    assert subjects[0] == receipt.format(id=submission.pk)
    assert subjects[1].endswith(decision.format(id=submission.pk))
