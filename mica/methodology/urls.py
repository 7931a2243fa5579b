from django.urls import path, re_path

from mica.content.page_cache import public_page_cache as cached
from mica.methodology import views

app_name = "methodology"

EDITION = r"[a-z0-9.-]{1,40}"

urlpatterns = [
    path("editions/", cached(views.edition_list), name="editions"),
    re_path(rf"^editions/(?P<slug>{EDITION})/$", cached(views.edition_detail), name="edition"),
    re_path(
        rf"^editions/(?P<older>{EDITION})/diff/(?P<newer>{EDITION})/$",
        cached(views.edition_diff_page),
        name="edition-diff",
    ),
    path("methodology/", cached(views.methodology), name="methodology"),
    re_path(
        r"^methodology/claims/(?P<section_id>[a-z0-9]+(?:-[a-z0-9]+)*)/$",
        cached(views.claim),
        name="claim",
    ),
    re_path(
        r"^methodology/downloads/mica-methodology-(?P<slug>[a-z0-9.-]{1,40})\.(?P<language>en|ko)\.md$",
        cached(views.download),
        name="download",
    ),
]
