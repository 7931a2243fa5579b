from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.contrib.sitemaps.views import sitemap
from django.urls import include, path, re_path
from django.utils.translation import gettext_lazy as _

from mica.site import manual, staff_views
from mica.site import views as site_views
from mica.site.sitemaps import SITEMAPS

# Language-neutral endpoints: machines read these, not people.
urlpatterns = [
    path("healthz", site_views.healthz, name="healthz"),
    path("healthz/system", site_views.healthz_system, name="healthz-system"),
    path("robots.txt", site_views.robots_txt, name="robots"),
    path(
        "sitemap.xml",
        sitemap,
        {"sitemaps": SITEMAPS, "template_name": "site/sitemap.xml"},
        name="sitemap",
    ),
    path("api/", include("mica.api_urls")),
    # The manual, built from docs/: English at /docs/, Korean at /docs/ko/.
    re_path(r"^docs/(?P<path>.*)$", manual.manual_page, name="manual"),
    re_path(r"^ko/docs/(?P<path>.*)$", manual.manual_korean, name="manual-korean"),
]

# Pages: English unprefixed, Korean under /ko/.
urlpatterns += i18n_patterns(
    path("", include("mica.site.urls")),
    path("", include("markets.urls")),
    path("", include("catalogue.urls")),
    path("", include("mica.methodology.urls")),
    path("", include("governance.urls")),
    path("", include("submissions.urls")),
    # The admin's second step, ahead of the admin's own catch-all.
    path("admin/second-factor/", staff_views.second_factor, name="second-factor"),
    path("admin/second-factor/enrol/", staff_views.second_factor_enrol, name="second-factor-enrol"),
    path("admin/", admin.site.urls),
    prefix_default_language=False,
)

admin.site.site_header = _("MICA portal administration")
admin.site.site_title = _("MICA portal")
admin.site.index_title = _("Records and reviews")

handler404 = "mica.site.views.page_not_found"
handler500 = "mica.site.views.server_error"
