"""Issue 17, headers and addresses: a Content-Security-Policy and a Permissions-Policy on
every answer, no redirect that leaves the site, absolute URLs from MICA_SITE_URL and
never from the Host header, and an admin `next=` that always lands inside the admin.

Redirects are asked for over real HTTP (the live server) with the raw path a browser or
a crawler would send: Django's test client would read //evil.example as a host.
"""

import http.client
import re
import subprocess
from urllib.parse import unquote, urlsplit

import pytest
from django.conf import settings
from hypothesis import HealthCheck, assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.factories import PASSWORD, StaffFactory

pytestmark = pytest.mark.django_db

SITE_URL = "https://mica.example"
FOREIGN_HOST = "127.0.0.1:9999"


def raw_get(live_server, path, host=None):
    """GET `path` byte for byte as given, over a fresh connection: (status, Location)."""
    address = urlsplit(live_server.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or address.netloc)
        connection.endheaders()
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Location")
    finally:
        connection.close()


def assert_local(location, path):
    """A Location a browser resolves to this site: a path, never //host, /\\host or a
    scheme, and no whitespace a browser would strip to make one."""
    assert location.startswith("/"), (path, location)
    assert location[1:2] not in ("/", "\\"), (path, location)
    assert not re.search(r"[\s\x00-\x1f\x7f]", location), (path, location)
    assert not urlsplit(location).netloc, (path, location)


@pytest.mark.parametrize(
    "path",
    [
        "/en//evil.example",
        "/en/%2Fevil.example",
        "/en///evil.example",
        "/en/%2F%2Fevil.example/",
        "/en/\\evil.example",
        "/en/%5Cevil.example",
        "/en//\\evil.example",
        "/en/%09/evil.example",
        "/ko//evil.example",
        "//evil.example",
        "///evil.example/",
        "/en//evil.example?next=//evil.example",
    ],
)
def test_the_listed_redirects_stay_on_the_site(live_server, path):
    """Issue 17: `GET /en//evil.example` answered `301 Location: //evil.example`."""
    status, location = raw_get(live_server, path)
    assert status < 500, path
    if 300 <= status < 400:
        assert_local(location, path)


def test_english_prefix_still_redirects_to_the_unprefixed_page(live_server):
    assert raw_get(live_server, "/en/methodology/") == (301, "/methodology/")
    assert raw_get(live_server, "/en//evil.example") == (301, "/%2Fevil.example")


SEGMENTS = st.sampled_from(
    ["", "/", "//", "\\", "%2F", "%2f", "%5C", "%5c", "%09", "%0A", "%00", ".", "..", "@"]
    + ["evil.example", "http:", "https:", "javascript:", "en", "ko", "admin", "methodology"]
)
PREFIXES = st.sampled_from(["", "/", "/en", "/en/", "/ko", "/ko/", "/admin", "/ko/admin/"])


@hypothesis_settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(prefix=PREFIXES, segments=st.lists(SEGMENTS, max_size=6), query=st.booleans())
def test_no_generated_path_is_redirected_off_the_site(live_server, prefix, segments, query):
    """Issue 17, "no redirect ever leaves the site": every 3xx names a local path."""
    path = prefix + "".join(segments)
    path = path if path.startswith("/") else "/" + path
    # The test server's own static and media handlers (never used in production, where
    # whitenoise serves /static/ only) answer a dot-dot path with a 500 of their own,
    # a backslash standing for the slash too ("/\.." reaches outside the media root),
    # percent-encoded or not ("/%5C.." is decoded to "/\.." before it is served).
    assume("/.." not in unquote(path).replace("\\", "/"))
    if query:
        path += "?next=//evil.example"
    status, location = raw_get(live_server, path)
    assert status < 500, path
    if 300 <= status < 400:
        assert_local(location, path)


@pytest.mark.parametrize("path", ["/methodology/", "/ko/methodology/", "/api/docs/"])
def test_absolute_links_name_the_site_url_whatever_the_host_header(
    client, canonical_content, settings, path
):
    """Issue 17: "a port in the Host header is reflected into canonical links"."""
    settings.SITE_URL = SITE_URL
    html = client.get(path, HTTP_HOST=FOREIGN_HOST).text
    logical = path.removeprefix("/ko")
    assert f'<link rel="canonical" href="{SITE_URL}{path}">' in html
    assert f'<meta property="og:url" content="{SITE_URL}{path}">' in html
    alternates = dict(re.findall(r'hreflang="([^"]+)" href="([^"]+)"', html))
    assert alternates == {
        "en": f"{SITE_URL}{logical}",
        "ko": f"{SITE_URL}/ko{logical}",
        "x-default": f"{SITE_URL}{logical}",
    }
    assert re.search(rf'property="og:image" content="{SITE_URL}/static/mica/social-card', html)
    assert FOREIGN_HOST not in html


def test_sitemap_robots_and_api_root_name_the_site_url(client, canonical_content, settings):
    settings.SITE_URL = SITE_URL
    sitemap = client.get("/sitemap.xml", HTTP_HOST=FOREIGN_HOST).text
    locations = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    alternates = re.findall(r'<xhtml:link [^>]*href="([^"]+)"', sitemap)
    assert locations and alternates
    assert all(url.startswith(f"{SITE_URL}/") for url in locations + alternates)
    robots = client.get("/robots.txt", HTTP_HOST=FOREIGN_HOST).text
    assert f"Sitemap: {SITE_URL}/sitemap.xml" in robots
    endpoints = client.get("/api/v1/", HTTP_HOST=FOREIGN_HOST).json()["endpoints"]
    assert all(url.startswith(f"{SITE_URL}/") for url in endpoints.values())


def test_make_run_names_the_served_port_in_the_site_url():
    """Issue 17: "confirmation e-mails and export URLs use MICA_SITE_URL (port 8000) even
    when `make run` serves another PORT"."""
    commands = subprocess.run(
        ["make", "-n", "run", "PORT=8080"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout
    serve = next(line for line in commands.splitlines() if "manage.py serve --bind" in line)
    assert "MICA_SITE_URL='http://127.0.0.1:8080'" in serve and "127.0.0.1:8080" in serve
    # serve_setup publishes the exports (regenerate_exports) before serving.
    setup = next(line for line in commands.splitlines() if "manage.py serve_setup" in line)
    assert "MICA_SITE_URL='http://127.0.0.1:8080'" in setup


@pytest.mark.parametrize(
    "path",
    ["/", "/ko/methodology/", "/api/v1/", "/sitemap.xml", "/no-such-page/", "/admin/login/"],
)
def test_every_answer_carries_the_policies(client, path):
    """Issue 17: "No Content-Security-Policy and no Permissions-Policy header"."""
    response = client.get(path)
    policy = response["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]*)", policy).group(1)
    assert script_src == "'self'"
    assert "default-src 'self'" in policy and "object-src 'none'" in policy
    assert "frame-ancestors 'none'" in policy
    permissions = response["Permissions-Policy"]
    for feature in ("camera", "microphone", "geolocation", "payment", "usb", "browsing-topics"):
        assert f"{feature}=()" in permissions
    assert "interest-cohort" not in permissions


def test_only_the_admin_allows_inline_styles(client):
    public = client.get("/")["Content-Security-Policy"]
    admin = client.get("/admin/login/")["Content-Security-Policy"]
    assert "'unsafe-inline'" not in public
    assert re.search(r"style-src 'self' 'unsafe-inline'", admin)
    assert re.search(r"script-src 'self'(;|$)", admin)


def test_static_files_carry_the_permissions_policy(client):
    assert client.get("/static/mica/menu.js")["Permissions-Policy"].startswith("camera=()")


@pytest.mark.parametrize(
    "next_url", ["//evil.example", "https://evil.example/", "/nonexistent", "/\\evil.example"]
)
def test_an_invalid_admin_next_lands_on_the_admin_index(client, canonical_content, next_url):
    """Issue 17: "an invalid admin `next=` lands on a 404"."""
    staff = StaffFactory(username="next-probe")
    url = f"/admin/login/?next={next_url}"
    form = client.get(url)
    assert form.status_code == 200
    response = client.post(
        url, {"username": staff.username, "password": PASSWORD, "next": next_url}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert client.get(response["Location"]).status_code == 200


def test_a_valid_admin_next_is_still_followed(client, canonical_content):
    staff = StaffFactory(username="next-keeper")
    url = "/ko/admin/login/?next=/ko/admin/jobs/jobrun/"
    response = client.post(
        url, {"username": staff.username, "password": PASSWORD, "next": "/ko/admin/jobs/jobrun/"}
    )
    assert response.status_code == 302 and response["Location"] == "/ko/admin/jobs/jobrun/"


def test_the_server_error_page_styles_itself_by_nonce(rf):
    """The 500 page needs nothing else to load: its inline styles carry the nonce the
    policy names, so no 'unsafe-inline' is needed for it either."""
    from csp.middleware import CSPMiddleware

    from mica.site.views import server_error

    response = CSPMiddleware(server_error)(rf.get("/ko/methodology/"))
    assert response.status_code == 500
    nonce = re.search(r"style-src 'self' 'nonce-([^']+)'", response["Content-Security-Policy"])
    assert nonce and f'<style nonce="{nonce.group(1)}">' in response.text
