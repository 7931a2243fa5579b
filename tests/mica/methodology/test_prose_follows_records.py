"""The portal's own sentences follow the records they speak of (issue 43, item 7, "Prose
that follows the records").

"The methodology writes market minimums ('at least 5 representative situations') as
literals while `/markets/` says 'situations: 4 of 5 required' … State sentences follow the
state: '[Planned] … until every threshold is agreed' stays with all four thresholds set;
'All are provisional candidates' stays with one validated task, also in the `/tasks/`
lead; 'Both have agreed values' has no antecedent. English plurals: '1 eligible runs',
'1 runs per task'. Citations: … several citations are joined by commas; 'Kakao Corp., n.d.'
twice without a/b; 'et al.:'."

Each test edits the record as an editor does (the admin's form POST, after-commit
callbacks executed) and reads the public pages in English and Korean. The packs keep
printing the seeds (tests/mica/methodology/test_pack.py and the Korean pack's test).
"""

import re
from html import unescape

import pytest

from markets.models import MarketEdition
from mica.content.changes import revisions_bump_all
from mica.methodology.models import Edition, Reference
from tests.catalogue.conftest import approved_in_korea, people, reviewed, task  # noqa: F401
from tests.census import form_data
from tests.factories import LeadFactory

pytestmark = pytest.mark.django_db


def text_of(client, url):
    """The page as a reader reads it: tags gone, entities decoded, white space folded."""
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def refs_of(client, url):
    """The "see:" lists of a page's claims, as read."""
    html = client.get(url).text
    found = re.findall(r'<span class="refs">\((.*?)\)</span>', html, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", r)).split()) for r in found]


def admin_edit(client, url, **changes):
    """Open an admin change form, change fields, save it as the browser would."""
    page = client.get(url)
    assert page.status_code == 200, (url, page.status_code)
    data = {**form_data(page.text), **changes, "_save": "Save"}
    response = client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    return response


@pytest.fixture
def editor(client, canonical_content):
    lead = LeadFactory(username="prose-lead")
    client.force_login(lead)
    return lead


def current_edition():
    return Edition.objects.get(status="draft")


# ------------------------------------------------------------------ thresholds


def test_all_four_thresholds_end_the_planned_sentence_and_one_is_singular(
    client, editor, django_capture_on_commit_callbacks
):
    """Seed 000: "[Planned] Publication thresholds. Minimum sample size and minimum
    coverage are unset by design. Until they are agreed, the gate refuses every result"; the
    portal's own branch said "Until every threshold is agreed" with all four set."""
    edition = current_edition()
    url = f"/admin/methodology/edition/{edition.pk}/change/"
    with django_capture_on_commit_callbacks(execute=True):
        admin_edit(client, url, min_eligible_runs="30", min_coverage="80")
    client.logout()
    partly = text_of(client, "/methodology/")
    assert "Until every threshold is agreed, the gate refuses every result" in partly
    assert "[Planned] Publication thresholds" in partly

    client.force_login(editor)
    with django_capture_on_commit_callbacks(execute=True):
        admin_edit(
            client,
            url,
            min_eligible_runs="1",
            min_coverage="80",
            runs_per_task="1",
            max_ineligible_discard_rate="10",
        )
    client.logout()
    english = text_of(client, "/methodology/")
    korean = text_of(client, "/ko/methodology/")

    assert "until every threshold is agreed" not in english.lower()
    assert "[Planned] Publication thresholds" not in english
    assert (
        "[Implemented] Publication thresholds. All four thresholds are agreed: 1 run per task, "
        "a minimum sample size of 1, minimum coverage of 80% and a maximum ineligible discard "
        "rate of 10%. The gate judges every result against them." in english
    )
    assert "모든 기준값이 합의되기 전까지" not in korean
    assert "[계획됨] 공개 기준값" not in korean and "[구현됨] 공개 기준값" in korean
    assert "네 기준값이 모두 합의되었습니다. 과제별 실행 1회, 최소 표본 수 1" in korean

    # "Both have agreed values" named neither; "1 eligible runs", "1 runs per task".
    assert "Both have agreed values" not in english
    assert (
        "Minimum eligible runs and minimum coverage both have agreed values: at least 1 "
        "eligible run and 80% coverage." in english
    )
    assert "최소 유효 실행 수와 최소 커버리지 모두 합의된 값이 있습니다." in korean
    assert "두 조건 모두 합의된 값이" not in korean
    assert "A cell is judged only on at least 1 eligible run;" in english
    assert "Publication thresholds for this edition: 1 run per task," in english
    assert not re.search(r"\b1 (eligible )?runs\b", english)


# ------------------------------------------------------------------ a validated task


def test_one_validated_task_ends_all_are_candidates_on_both_pages(
    client,
    people,  # noqa: F811
    task,  # noqa: F811
    reviewed,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    """Seed 000: "All 100 public definitions are provisional candidates"; the scoring lead
    "the current task definitions are provisional candidates", the status line "The current
    catalogue is candidate definitions only" and the /tasks/ lead "All definitions here are
    provisional public candidates" stayed with a validated task."""
    before = text_of(client, "/tasks/")
    assert "All definitions here are provisional public candidates" in before

    client.force_login(people["lead"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/admin/catalogue/taskdefinition/",
            {"action": "promote", "_selected_action": [task.pk]},
        )
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.lifecycle == "validated"
    client.logout()

    english = text_of(client, "/methodology/")
    korean = text_of(client, "/ko/methodology/")
    assert "The current catalogue is candidate definitions only." not in english
    assert "the current task definitions are provisional candidates" not in english
    assert "Of the current catalogue's 100 definitions, 1 is validated; the others are" in (english)
    assert (
        "Nothing has been scored yet: 99 of the 100 current task definitions are provisional "
        "candidates without pre-registered references." in english
    )
    assert "현재 목록은 후보 정의뿐입니다." not in korean
    assert "현재 과제 정의는 사전 등록 기준값이 없는 잠정 후보입니다." not in korean
    assert "현재 목록의 정의 100개 중 1개가 검증되었고, 나머지는 후보입니다." in korean
    assert "현재 과제 정의 100개 중 99개는 사전 등록 기준값이 없는 잠정 후보입니다." in korean
    # The policy register: "They are provisional public-set candidates: not executable …"
    assert "They are provisional public-set candidates" not in english
    assert "1 is validated; the other 99 are provisional public-set candidates: not" in english
    assert "모두 공개 세트의 잠정 후보이며" not in korean
    assert "1개는 검증되었고, 나머지 99개는 공개 세트의 잠정 후보로서" in korean

    tasks_en = text_of(client, "/tasks/")
    tasks_ko = text_of(client, "/ko/tasks/")
    assert "All definitions here are provisional public candidates" not in tasks_en
    assert "Of the 100 definitions here, 1 is validated; the others are provisional" in tasks_en
    assert "여기 실린 정의는 모두 잠정 공개 후보입니다" not in tasks_ko
    assert "여기 실린 정의 100개 중 1개는 검증되었고, 나머지는 잠정 공개 후보입니다." in tasks_ko


# ------------------------------------------------------------------ market minimums


def test_market_minimums_are_the_coverage_audits(client, canonical_content, monkeypatch):
    """Seed 000: "Each of the 6 market editions declares at least 5 representative
    situations, spanning at least 3 surfaces, …" while /markets/kr/ says "situations: 4 of
    5 required": both now read markets.services.COVERAGE_DIMENSIONS."""
    english = text_of(client, "/methodology/")
    assert "declares at least 5 representative situations, spanning at least 3 surfaces" in (
        english
    )
    from markets import services

    lowered = [(key, label, choices, 1) for key, label, choices, _n in services.COVERAGE_DIMENSIONS]
    monkeypatch.setattr(services, "COVERAGE_DIMENSIONS", lowered)
    revisions_bump_all()  # a release with new minimums: every page is made again
    count = MarketEdition.objects.filter(edition__status="draft").count()
    english = text_of(client, "/methodology/")
    korean = text_of(client, "/ko/methodology/")
    assert (
        f"Each of the {count} market editions declares at least 1 representative situation, "
        "spanning at least 1 surface, 1 authorization boundary, 1 completion semantics, "
        "1 recovery condition and 1 evidence type." in english
    )
    assert (
        f"{count}개 시장 에디션은 각각 최소 1개의 대표 상황을 선언하며, 최소 1개 표면, "
        "1개 승인 경계, 1개 완료 의미, 1개 복구 조건, 1개 근거 유형을 포괄합니다." in korean
    )
    assert re.search(r"Situations: \d+ of 1 required", text_of(client, "/markets/kr/"))


# ------------------------------------------------------------------ citations


@pytest.mark.parametrize(
    "prefix, kakao",
    [
        ("", "Kakao Corp., n.d.-a; Kakao Corp., n.d.-b; LY Corporation, n.d.-a"),
        ("/ko", "Kakao Corp.(연도 미상-a); Kakao Corp.(연도 미상-b); LY Corporation(연도 미상-a)"),
    ],
)
def test_citations_are_told_apart_and_separated(client, canonical_content, prefix, kakao):
    """The page printed "Kakao Corp., n.d., Kakao Corp., n.d., LY Corporation, n.d., …" and
    "OECD and European Commission, Joint Research Centre, 2008, Keeney and Raiffa, 1993";
    its reference list "Agarwal et al.: Deep Reinforcement Learning …"."""
    refs = refs_of(client, f"{prefix}/methodology/")
    assert any(kakao in r for r in refs), refs
    joined = "\n".join(refs)
    assert re.search(r"Joint Research Centre(, 2008|\(2008\)); Keeney", joined), joined
    assert not re.search(r"(\d{4}[a-z]?|n\.d\.(-[a-z])?|\)), [A-Z]", joined), joined
    if not prefix:  # seed 001 itself prints "Agarwal et al.: Deep …", which Korean keeps
        page = text_of(client, "/methodology/")
        assert "et al.:" not in page
        assert "Agarwal et al. — Deep Reinforcement Learning at the Edge" in page


def reference_entries(client, url):
    """{entry id: the entry's first line, as read} of a page's reference lists."""
    html = client.get(url).text
    entries = re.findall(r'<li id="(ref-[^"]+)">(.*?)\n', html)
    return {key: " ".join(unescape(re.sub(r"<[^>]+>", "", line)).split()) for key, line in entries}


@pytest.mark.parametrize(
    "prefix, webarena, kakao",
    [
        ("", "Zhou et al., 2024. WebArena: A Realistic", "Kakao Corp., n.d.-a. Kakao Developers"),
        (
            "/ko",
            "Zhou 외(2024). WebArena: A Realistic",
            "Kakao Corp.(연도 미상-a). Kakao Developers",
        ),
    ],
)
def test_every_listed_reference_names_its_authors(
    client, canonical_content, prefix, webarena, kakao
):
    """The reference list printed "WebArena: A Realistic Web Environment … ICLR 2024": a
    reader who followed "see: Zhou et al., 2024" found no Zhou there."""
    entries = reference_entries(client, f"{prefix}/methodology/")
    cited = set(
        Reference.objects.filter(edition__status="draft").values_list("section_id", flat=True)
    )
    assert cited <= set(entries)
    assert entries["ref-webarena"].startswith(webarena)
    assert entries["ref-kakao-app"].startswith(kakao)
    # An entry whose label already names its authors says them once.
    assert entries["ref-agarwal-statistical"].startswith("Agarwal et al.")
    assert entries["ref-agarwal-statistical"].count("Agarwal") == 1


def test_a_citation_follows_its_records_edited_in_the_admin(
    client, editor, django_capture_on_commit_callbacks
):
    """Two undated Kakao pages are "n.d.-a" and "n.d.-b"; dated in the admin, one is cited
    by its year and the other needs no letter."""
    reference = Reference.objects.get(edition__status="draft", key="kakao-message")
    with django_capture_on_commit_callbacks(execute=True):
        admin_edit(client, f"/admin/methodology/reference/{reference.pk}/change/", issued="2024")
    client.logout()
    english = "\n".join(refs_of(client, "/methodology/"))
    korean = "\n".join(refs_of(client, "/ko/methodology/"))
    assert "Kakao Corp., n.d.; Kakao Corp., 2024; LY Corporation, n.d.-a" in english
    assert "Kakao Corp.(연도 미상); Kakao Corp.(2024); LY Corporation(연도 미상-a)" in korean
    assert reference_entries(client, "/methodology/")["ref-kakao-message"].startswith(
        "Kakao Corp., 2024. "
    )
