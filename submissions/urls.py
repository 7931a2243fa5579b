from django.urls import path, re_path

from mica.content.page_cache import public_page_cache as cached
from submissions import views

app_name = "submissions"

urlpatterns = [
    path("submit/", views.submit, name="submit"),
    path("submit/challenge/", views.challenge_new, name="challenge-new"),
    path("submit/challenge/filed/", views.challenge_filed, name="challenge-filed"),
    re_path(
        r"^submit/challenge/confirm/(?P<token>[A-Za-z0-9_:.-]{1,300})/$",
        views.challenge_confirmed,
        name="challenge-confirm",
    ),
    path("submit/system/", views.system_new, name="system-new"),
    path("submit/operators/", cached(views.operator_guide), name="operator-guide"),
    path("challenges/", cached(views.challenge_list), name="challenges"),
    re_path(r"^challenges/(?P<pk>[0-9]{1,9})/$", views.challenge_detail, name="challenge"),
]
