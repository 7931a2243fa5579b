"""What an operator reads before writing a line of code: the API schema, the API reference
page and the operator guide, in English and Korean.

Issue 19, item 5: "the OpenAPI schema documents every request body with field
descriptions and examples, the token scheme (with how to get a token), every error code
an endpoint can return with its rule names; ... A short operator guide page (both
languages) walks through registering a system, getting a token, recording a batch (API
and JSONL), reading the gate's answer."
"""

import json
import re
from html import unescape
from pathlib import Path

import pytest
from django.utils import translation

from mica.site.api_docs import api_operations, api_schema
from submissions import ingest
from submissions.api.examples import VALID_BATCH
from submissions.ingest import ATTEMPT_RULES

pytestmark = pytest.mark.django_db

ATTEMPTS = "/api/v1/attempts/"


def in_language(language, read):
    with translation.override(language):
        return read()


def test_every_rule_the_ingestion_refuses_with_is_documented():
    """Every rule name a refusal of submissions/ingest.py can carry is one ATTEMPT_RULES
    documents (and the schema shows with an example), and no documented rule is unused."""
    source = Path(ingest.__file__).read_text()
    named = set(re.findall(r'refuse\(\s*"([a-z0-9-]+)"', source))
    named |= set(re.findall(r'"rule": \["([a-z0-9-]+)"\]', source))
    named |= set(re.findall(r'_refuse_by_rule\(\s*"([a-z0-9-]+)"', source))
    assert len(named) > 20
    assert named == set(ATTEMPT_RULES)


def test_every_rule_has_a_request_and_an_answer_of_its_status_in_the_schema():
    operation = api_schema()["paths"][ATTEMPTS]["post"]
    requests = operation["requestBody"]["content"]["application/json"]["examples"]
    for rule, (status, _sentence) in ATTEMPT_RULES.items():
        answers = operation["responses"][str(status)]["content"]["application/json"]["examples"]
        name = rule.capitalize()
        assert name in requests and name in answers, rule
        assert answers[name]["value"]["errors"]["rule"] == [rule]
        assert rule in operation["responses"][str(status)]["description"]


@pytest.mark.parametrize("language", ["en", "ko"])
def test_every_request_body_field_is_described(language):
    operations = in_language(language, api_operations)
    bodies = [op for op in operations if op["fields"]]
    assert {op["path"] for op in bodies} >= {
        ATTEMPTS,
        "/api/v1/system-submissions/",
        "/api/v1/challenges/",
    }
    undescribed = [
        f"{op['path']} {field['name']}"
        for op in bodies
        for field in op["fields"]
        if not field["description"]
    ]
    assert undescribed == []
    attempt_fields = next(op for op in bodies if op["path"] == ATTEMPTS)["fields"]
    assert "invocations[].cost_usd" in {f["name"] for f in attempt_fields}


def test_every_request_body_field_reads_in_korean():
    def described(language):
        return {
            (op["path"], f["name"]): str(f["description"])
            for op in in_language(language, api_operations)
            for f in op["fields"]
        }

    english, korean = described("en"), described("ko")
    assert english.keys() == korean.keys() and len(english) > 60
    assert [field for field in english if english[field] == korean[field]] == []


def test_the_token_scheme_says_how_to_get_a_token():
    scheme = api_schema()["components"]["securitySchemes"]["tokenAuth"]
    assert (scheme["type"], scheme["in"], scheme["name"]) == ("apiKey", "header", "Authorization")
    assert "Token <key>" in scheme["description"]
    assert "/submit/operators/" in scheme["description"]
    assert api_schema()["paths"][ATTEMPTS]["post"]["security"] == [{"tokenAuth": []}]


@pytest.mark.parametrize(
    "prefix, words",
    [
        ("", ["Request bodies", "Try it: record attempts with your token", "Tokens"]),
        ("/ko", ["요청 본문", "직접 해 보기: 내 토큰으로 시도 기록하기", "토큰"]),
    ],
)
def test_the_api_reference_shows_bodies_tokens_answers_and_the_console(
    client, canonical_content, prefix, words
):
    """Finding: "`/api/docs/` shows "Parameters: None" and no request body for
    `POST /api/v1/attempts/`, no token instructions, the attempt fields have no
    descriptions"."""
    html = client.get(f"{prefix}/api/docs/").text
    assert all(word in html for word in words)
    row = re.search(r'<tr id="v1_attempts_create">(.*?)</tr>', html, re.S).group(1)
    assert 'href="#body-v1_attempts_create"' in row
    assert "<code>invocations[].cost_usd</code>" in html
    assert "<code>success-without-proof</code>" in html
    assert f'href="{prefix}/submit/operators/"' in html
    examples = json.loads(re.search(r'id="try-examples"[^>]*>(.*?)</script>', html, re.S)[1])
    assert json.loads(examples["Valid-batch"]["body"]) == VALID_BATCH


def test_the_api_reference_is_one_page_a_language_whatever_the_browser_asks(
    client, canonical_content
):
    """Issue 33, item 9: "`/api/docs/` is one page per language like the others (Korean at
    `/ko/api/docs/`), never varying by `Accept-Language` behind a bake"."""
    english = client.get("/api/docs/", HTTP_ACCEPT_LANGUAGE="ko")
    assert english.status_code == 200
    assert '<html lang="en"' in english.text and "Request bodies" in english.text
    assert "요청 본문" not in english.text
    korean = client.get("/ko/api/docs/", HTTP_ACCEPT_LANGUAGE="en")
    assert '<html lang="ko"' in korean.text and "요청 본문" in korean.text
    # The API itself still answers in the reader's language.
    schema = client.get("/api/schema/", HTTP_ACCEPT_LANGUAGE="ko")
    assert "Accept-Language" in schema.headers.get("Vary", "")


@pytest.mark.parametrize("prefix, heading", [("", "Operator guide"), ("/ko", "운영 주체 안내서")])
def test_the_operator_guide_walks_from_submission_to_the_gates_answer(
    client, canonical_content, settings, prefix, heading
):
    html = client.get(f"{prefix}/submit/operators/").text
    assert f"<h1>{heading}</h1>" in html
    for anchor in ("register", "token", "record-json", "record-jsonl", "answer-gate"):
        assert f'id="{anchor}"' in html
    samples = [unescape(s) for s in re.findall(r"<code>(.*?)</code></pre>", html, re.S)]
    assert f"curl -X POST {settings.SITE_URL}{ATTEMPTS}" in samples[2]
    assert "Content-Type: application/jsonl" in samples[4]
    assert json.loads(samples[3]) == VALID_BATCH
    assert [json.loads(line) for line in samples[5].splitlines()] == VALID_BATCH
    for rule in ATTEMPT_RULES:
        assert f"<code>{rule}</code>" in html
    # Linked from the submit page and the API reference, and listed in the sitemap.
    assert f'href="{prefix}/submit/operators/"' in client.get(f"{prefix}/submit/").text
    assert "/submit/operators/" in client.get("/sitemap.xml").text


def test_the_operator_guide_reads_no_more_than_the_page_shell(
    client, canonical_content, django_assert_max_num_queries
):
    """A public page runs a constant number of queries: the guide reads no records of its
    own beyond what every page's shell reads."""
    shell = client.get("/submit/")  # warm, and the comparison
    assert shell.status_code == 200
    with django_assert_max_num_queries(3):
        assert client.get("/ko/submit/operators/").status_code == 200
