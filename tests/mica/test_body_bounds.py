"""Every body is bounded, whatever its media type (issue 33, item 5 and item 9): a JSON Lines
body over the upload bound is refused with 413 before it is read, not parsed whole first; JSON
Lines ends a line at "\\n" only, so U+2028 in a string is data in every intake; a charset no
codec reads is a clear 4xx in the reader's language, not a 500.
"""

import io
import json
import tracemalloc

import pytest
from django.core.management import call_command
from django.test.client import ClientHandler
from django.utils import translation

from mica.parsers import TOO_LARGE, UNKNOWN_CHARSET
from submissions.models import Attempt, ModelInvocation
from tests.factories import api_auth, attempt_payload

pytestmark = pytest.mark.django_db

URL = "/api/v1/attempts/"
MB = 1 << 20
LINE = (json.dumps(attempt_payload()) + "\n").encode()


class RunFile(io.RawIOBase):
    """A JSON Lines body of `size` bytes that exists only as it is read: whatever the
    request holds in memory is what the portal chose to read."""

    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.left)
        whole, part = divmod(count, len(LINE))
        buffer[:count] = LINE * whole + LINE[:part]
        self.left -= count
        return count


def _wsgi_post(size, headers):
    """POST a body of `size` bytes through Django's WSGI handling, as a server hands it over:
    (status, answer, the peak of memory allocated while the request ran)."""
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": URL,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BufferedReader(RunFile(size)),
        "CONTENT_TYPE": "application/jsonl",
        "CONTENT_LENGTH": str(size),
        **headers,
    }
    tracemalloc.start()
    try:
        response = ClientHandler()(environ)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return response.status_code, json.loads(response.content), peak


def test_a_30_mb_json_lines_body_gets_413_with_the_workers_memory_unchanged(operator):
    """Issue 33, item 5: "a 30 MB JSON Lines body gets 413 with the worker's memory
    unchanged" (it was parsed whole: about 1.2 GB a worker)."""
    headers = {**api_auth(operator), "HTTP_ACCEPT_LANGUAGE": "ko"}
    # A first request loads what every request uses (code, translations): not the body's.
    _wsgi_post(30 * MB, headers)
    status, answer, peak = _wsgi_post(30 * MB, headers)
    assert status == 413
    with translation.override("ko"):
        assert answer["detail"] == str(TOO_LARGE) % {"limit": 2_621_440}
    assert peak < 2 * MB, f"{peak / MB:.1f} MB allocated to refuse the body"
    assert Attempt.objects.count() == 0


def test_a_json_lines_body_just_over_the_bound_is_413_and_one_within_it_is_read(
    client, operator, settings
):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(LINE) * 2
    headers = {"content_type": "application/jsonl", **api_auth(operator)}
    over = client.post(URL, LINE * 2 + b"\n", **headers)
    assert over.status_code == 413
    assert over.json() == {
        "detail": f"The request body is larger than the {len(LINE) * 2} bytes the API accepts."
    }
    assert Attempt.objects.count() == 0
    assert client.post(URL, LINE, **headers).status_code == 201


def _with_separators(purpose):
    """The attempt with an invocation purpose that holds the separators JSON allows raw."""
    payload = attempt_payload()
    payload["invocations"][0]["purpose"] = purpose
    return payload


PURPOSE = "plan\u2028then act\u2029check\x85done"


def test_u2028_in_a_string_is_data_and_crlf_ends_a_line(client, operator):
    """Issue 33, item 5: "the JSON Lines parser splits on \\n only (\\r\\n accepted), so
    U+2028 in a string is data"."""
    second = {**attempt_payload(), "attempt_id": "acme-kr-002"}
    body = (
        json.dumps(_with_separators(PURPOSE), ensure_ascii=False)
        + "\r\n"
        + json.dumps(second)
        + "\r\n"
    ).encode()
    response = client.post(URL, body, content_type="application/jsonl", **api_auth(operator))
    assert response.status_code == 201, response.content
    assert Attempt.objects.count() == 2
    assert ModelInvocation.objects.filter(purpose=PURPOSE).count() == 1


def test_the_command_reads_json_lines_as_the_api_does(staff, tmp_path):
    run_file = tmp_path / "run.jsonl"
    run_file.write_bytes(
        json.dumps(_with_separators(PURPOSE), ensure_ascii=False).encode() + b"\r\n"
    )
    call_command(
        "ingest_attempts", str(run_file), "--as-user", staff.username, stdout=io.StringIO()
    )
    assert ModelInvocation.objects.filter(purpose=PURPOSE).count() == 1


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("media_type", ["application/json", "application/jsonl"])
def test_a_body_in_an_unknown_charset_is_refused_in_the_readers_language(
    client, operator, language, media_type
):
    """Issue 33, item 9: "a JSON body with an unknown charset is refused" (it answered 500)."""
    # generic(): post() would encode the body in the named charset itself, and fail.
    response = client.generic(
        "POST",
        URL,
        json.dumps(attempt_payload()).encode(),
        content_type=f"{media_type}; charset=x-no-such-charset",
        HTTP_ACCEPT_LANGUAGE=language,
        **api_auth(operator),
    )
    assert response.status_code == 415
    with translation.override(language):
        expected = str(UNKNOWN_CHARSET) % {"charset": "x-no-such-charset"}
    assert response.json()["detail"] == expected
    assert Attempt.objects.count() == 0
