from django.urls import path

from mica.exports import views as export_views
from mica.site import planner_views, search_views, views

app_name = "site"

urlpatterns = [
    path("", views.home, name="home"),
    path("api/docs/", views.api_docs, name="api-docs"),
    path("downloads/", export_views.downloads, name="downloads"),
    path("downloads/<str:name>", export_views.download_file, name="download-file"),
    path("search/", search_views.search_page, name="search"),
    path("evaluate/", planner_views.evaluate, name="evaluate"),
    path("evaluate/manifest.json", planner_views.scope_manifest, name="evaluate-manifest"),
]
