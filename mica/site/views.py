from django.conf import settings
from django.http import HttpResponse, HttpResponseNotFound, HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.urls import reverse
from django.utils import translation
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from mica.content.fragments import fragment_rendered
from mica.errors import RecordNotFound
from mica.methodology.selectors import edition_current
from mica.site.api_docs import api_operations, request_examples, token_scheme
from mica.site.health import health_details_allowed, node_health, system_health
from mica.site.i18n import KOREAN_PREFIX_RE
from mica.site.ledger import home_ledger, method_frame


@require_safe
def home(request):
    body = fragment_rendered("site/_home.html", _home_context)
    return render(request, "site/home.html", {"body": body})


def _home_context():
    edition = edition_current()
    return {"edition": edition, "ledger": home_ledger(edition), "method": method_frame(edition)}


@require_safe
def api_docs(request):
    attempts = reverse("api-attempt-ingest")
    return render(
        request,
        "site/api_docs.html",
        {
            "operations": api_operations(),
            "token_scheme": token_scheme(),
            # The console offers the schema's own request examples, to send as they are,
            # in the examples' sandbox: each gets its documented answer on any install,
            # and trying the API never records on a real snapshot.
            "console": {"path": f"{attempts}?sandbox=1", "examples": request_examples(attempts)},
        },
    )


@never_cache
@require_safe
def healthz(request):
    """This node's health, for a load balancer: 503 only when the node cannot serve."""
    healthy, report = node_health()
    return JsonResponse(report, status=200 if healthy else 503)


@never_cache
@require_safe
def healthz_system(request):
    """The deployment's health, for monitoring: every problem in English and Korean for
    staff and for the monitoring token; the overall status alone for anyone else, since
    the details name hosts, queues and errors."""
    healthy, report = system_health()
    if not health_details_allowed(request):
        report = {"status": report["status"]}
    return JsonResponse(
        report, status=200 if healthy else 503, json_dumps_params={"ensure_ascii": False}
    )


@require_safe
def robots_txt(request):
    sitemap_url = settings.SITE_URL + reverse("sitemap")
    if settings.PUBLIC_SITE:
        lines = ["User-agent: *", "Allow: /", "Disallow: /admin/", "Disallow: /ko/admin/"]
    else:
        # Not the public production site: nothing here is to be indexed.
        lines = ["User-agent: *", "Disallow: /"]
    lines += ["", f"Sitemap: {sitemap_url}", ""]
    return HttpResponse("\n".join(lines), content_type="text/plain; charset=utf-8")


def page_not_found(request, exception=None):
    # A view that knows what is missing says so (mica.errors.RecordNotFound).
    missing = exception if isinstance(exception, RecordNotFound) else None
    html = loader.render_to_string("site/404.html", {"missing": missing}, request=request)
    return HttpResponseNotFound(html)


def server_error(request):
    # Rendered without context processors: whatever failed (the database, say)
    # must not fail the error page too.
    language = "ko" if KOREAN_PREFIX_RE.match(request.path) else "en"
    context = {
        "LANGUAGE_CODE": language,
        "home_url": "/ko/" if language == "ko" else "/",
        # Its styles are inline so that it needs nothing else to load; the CSP lets
        # them in by this nonce (an error before CSPMiddleware ran has none).
        "csp_nonce": str(request.csp_nonce) if hasattr(request, "csp_nonce") else "",
    }
    with translation.override(language):
        html = loader.get_template("site/500.html").render(context)
    return HttpResponseServerError(html)
