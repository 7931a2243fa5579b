from django.urls import path

from mica.content.page_cache import public_page_cache as cached
from mica.exports import views as export_views
from mica.exports.selectors import export_page_variant
from mica.site import planner_views, search_views, transparency, views

app_name = "site"

urlpatterns = [
    path("", cached(views.home), name="home"),
    path("api/docs/", cached(views.api_docs), name="api-docs"),
    path(
        "downloads/", cached(export_views.downloads, variant=export_page_variant), name="downloads"
    ),
    path("downloads/<str:name>", export_views.download_file, name="download-file"),
    path("search/", cached(search_views.search_page), name="search"),
    path("evaluate/", cached(planner_views.evaluate), name="evaluate"),
    path("evaluate/manifest.json", planner_views.scope_manifest, name="evaluate-manifest"),
    path(
        "transparency/",
        cached(transparency.transparency, variant=transparency.transparency_variant),
        name="transparency",
    ),
    path("transparency/log.json", transparency.transparency_log, name="transparency-log"),
    path("transparency/key", transparency.transparency_key, name="transparency-key"),
]
