from django.urls import path, re_path

from mica.methodology import views

app_name = "methodology"

urlpatterns = [
    path("methodology/", views.methodology, name="methodology"),
    re_path(
        r"^methodology/claims/(?P<section_id>[a-z0-9]+(?:-[a-z0-9]+)*)/$", views.claim, name="claim"
    ),
    re_path(
        r"^methodology/downloads/mica-methodology-(?P<slug>[a-z0-9.-]{1,40})\.(?P<language>en|ko)\.md$",
        views.download,
        name="download",
    ),
]
