"""Whole public pages from the shared cache: fresh after every change to what they show,
cached through every other change, 304 when nothing changed, never for forms,
signed-in readers or anything but a plain 200."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.http import HttpResponse, HttpResponseNotFound
from django.template import engines
from django.test import RequestFactory
from django.utils.http import http_date

from mica.content.page_cache import public_page_cache
from mica.content.revision import revisions_read
from mica.methodology.models import ChapterItem

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


CLAIMS = ChapterItem._meta.db_table


def _claim():
    return ChapterItem.objects.filter(item_type="claim").order_by("pk").first()


def _claims_revision():
    return revisions_read()[CLAIMS]


def test_a_cached_page_changes_right_after_a_content_change(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    claim = _claim()
    assert "Freshly rewritten claim." not in client.get("/methodology/").text
    before = _claims_revision()
    with django_capture_on_commit_callbacks(execute=True):
        claim.detail_en = "Freshly rewritten claim."
        claim.save()
    assert _claims_revision()[0] == before[0] + 1
    assert "Freshly rewritten claim." in client.get("/methodology/").text


def test_a_queryset_update_moves_the_revision_too(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    # No post_save is sent for an update, yet publishing works this way.
    claim = _claim()
    client.get("/methodology/")
    before = _claims_revision()
    with django_capture_on_commit_callbacks(execute=True):
        ChapterItem.objects.filter(pk=claim.pk).update(detail_en="Updated in bulk.")
    assert _claims_revision()[0] == before[0] + 1
    assert "Updated in bulk." in client.get("/methodology/").text


def test_an_uncommitted_change_bypasses_the_cache(client, canonical_content, page_cache):
    # Inside the test's transaction nothing commits, so the revision stays where it
    # was; a page of that revision must not be served, nor this one stored under it.
    claim = _claim()
    client.get("/methodology/")
    before = revisions_read()
    claim.detail_en = "Not committed yet."
    claim.save()
    assert revisions_read() == before
    for _ in range(2):
        response = client.get("/methodology/")
        assert "Not committed yet." in response.text and "ETag" not in response


def test_the_second_anonymous_get_reads_only_the_revision(
    client, canonical_content, page_cache, django_assert_max_num_queries
):
    for path in ("/methodology/", "/tasks/", "/ko/markets/kr/"):
        first = client.get(path)
        with django_assert_max_num_queries(1):
            second = client.get(path)
        assert second.status_code == 200 and second.content == first.content


def test_every_answer_carries_validators_and_304_on_a_match(client, canonical_content, page_cache):
    response = client.get("/tasks/")
    assert response.status_code == 200
    etag, modified = response["ETag"], response["Last-Modified"]
    # Loading the content moved every table at the same moment: the page read some.
    loaded_at = max(changed_at for _number, changed_at in revisions_read().values())
    assert etag.startswith('"') and modified == http_date(loaded_at.timestamp())
    assert response["Cache-Control"] == "public, max-age=0, must-revalidate"
    assert "Cookie" in response["Vary"]
    again = client.get("/tasks/")
    assert again["ETag"] == etag and again.content == response.content

    not_modified = client.get("/tasks/", HTTP_IF_NONE_MATCH=etag)
    assert not_modified.status_code == 304 and not_modified.content == b""
    assert not_modified["ETag"] == etag
    assert client.get("/tasks/", HTTP_IF_MODIFIED_SINCE=modified).status_code == 304
    assert client.get("/tasks/", HTTP_IF_NONE_MATCH='"other"').status_code == 200


def test_a_content_change_invalidates_the_etag(
    client, canonical_content, page_cache, django_capture_on_commit_callbacks
):
    etag = client.get("/methodology/")["ETag"]
    with django_capture_on_commit_callbacks(execute=True):
        claim = _claim()
        claim.detail_en = "A change a reader must see."
        claim.save()
    response = client.get("/methodology/", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and response["ETag"] != etag


def test_each_language_and_query_has_its_own_entry(
    client, canonical_content, page_cache, django_assert_max_num_queries
):
    pages = {}
    for path in ("/methodology/", "/ko/methodology/", "/tasks/", "/tasks/?family=shopping"):
        pages[path] = client.get(path)
    for path, first in pages.items():
        with django_assert_max_num_queries(1):
            assert client.get(path).content == first.content
    assert '<html lang="en">' in pages["/methodology/"].text
    assert '<html lang="ko">' in pages["/ko/methodology/"].text
    assert pages["/methodology/"]["ETag"] != pages["/ko/methodology/"]["ETag"]


def test_a_signed_in_reader_gets_a_fresh_private_render(
    client, canonical_content, page_cache, admin_user, django_assert_max_num_queries
):
    client.get("/tasks/")
    with django_assert_max_num_queries(1):
        client.get("/tasks/")
    client.force_login(admin_user)
    with django_assert_max_num_queries(100) as render:
        response = client.get("/tasks/")
    assert len(render.captured_queries) > 2  # the session, the user, the page's own reads
    assert response.status_code == 200 and "ETag" not in response
    assert "private" in response["Cache-Control"]


def _counting(view):
    calls = []

    def counted(request, *args, **kwargs):
        calls.append(request.path)
        return view(request, *args, **kwargs)

    return calls, public_page_cache(counted)


def _twice(view, path="/probe/"):
    calls, cached = _counting(view)
    responses = [cached(RequestFactory().get(path)) for _ in range(2)]
    return len(calls), responses


def test_a_page_with_a_post_form_is_not_cached(canonical_content, page_cache):
    form = engines["django"].from_string(
        '<form method="post">{% csrf_token %}<button>Send</button></form>'
    )
    calls, responses = _twice(lambda request: HttpResponse(form.render({}, request)))
    assert calls == 2
    assert all("csrfmiddlewaretoken" in r.content.decode() for r in responses)
    assert all("ETag" not in r for r in responses)


def test_the_challenge_form_is_rendered_for_every_reader(client, canonical_content, page_cache):
    for _ in range(2):
        response = client.get("/submit/challenge/")
        assert "csrfmiddlewaretoken" in response.text and "ETag" not in response
        assert "csrftoken" in response.cookies


def test_answers_that_set_cookies_or_fail_are_not_cached(canonical_content, page_cache):
    def with_cookie(request):
        response = HttpResponse("hello")
        response.set_cookie("seen", "1")
        return response

    assert _twice(with_cookie)[0] == 2
    assert _twice(lambda request: HttpResponseNotFound("gone"))[0] == 2
    calls, responses = _twice(lambda request: HttpResponse("plain"))
    assert calls == 1 and responses[1].content == b"plain" and responses[1]["ETag"]


def test_the_admin_and_the_api_are_not_cached(client, canonical_content, page_cache):
    assert "ETag" not in client.get("/api/v1/editions/")
    assert "ETag" not in client.get("/admin/login/")


def test_the_cache_can_be_switched_off(client, canonical_content, settings):
    settings.PAGE_CACHE_SECONDS = 0
    response = client.get("/tasks/")
    assert response.status_code == 200 and "ETag" not in response


PRODUCTION_STATIC_PROBE = """
import json, django
django.setup()
from django.core.management import call_command
from django.templatetags.static import static
from django.test import Client
call_command("collectstatic", interactive=False, verbosity=0)
url = static("mica/site.css")
response = Client().get(url, HTTP_ACCEPT_ENCODING="gzip", secure=True)
plain = Client().get("/static/mica/site.css", secure=True)
print(json.dumps({
    "url": url,
    "status": response.status_code,
    "cache_control": response.get("Cache-Control"),
    "encoding": response.get("Content-Encoding"),
    "plain_cache_control": plain.get("Cache-Control"),
}))
"""


@pytest.mark.embedded_only
def test_production_static_files_are_hashed_compressed_and_cached_for_long(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MICA_")}
    env.update(
        DJANGO_SETTINGS_MODULE="mica.settings",
        MICA_VAR_DIR=str(tmp_path),
        MICA_STATIC_ROOT=str(tmp_path / "static"),
        MICA_SECRET_KEY="k3-" + "x7Qp9vLm2Zr8Wt4Yn6Bc1Hd5Jf0Gs3Ka" * 2,
        MICA_ALLOWED_HOSTS="testserver",
    )
    result = subprocess.run(
        [sys.executable, "-c", PRODUCTION_STATIC_PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert served["url"] != "/static/mica/site.css"  # a hashed name
    assert served["status"] == 200
    assert "immutable" in served["cache_control"]
    max_age = int(served["cache_control"].split("max-age=")[1].split(",")[0])
    assert max_age >= 365 * 24 * 3600
    assert served["encoding"] in ("gzip", "br")
    # The unhashed name may change under the same URL: a short lifetime only.
    assert "immutable" not in (served["plain_cache_control"] or "")
