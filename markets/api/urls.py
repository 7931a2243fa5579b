from django.urls import path, re_path

from markets.api import views

urlpatterns = [
    path("markets/", views.MarketList.as_view(), name="api-market-list"),
    re_path(
        r"^markets/(?P<code>[A-Za-z]{2})/$", views.MarketDetail.as_view(), name="api-market-detail"
    ),
    re_path(
        r"^markets/(?P<code>[A-Za-z]{2})/situations/(?P<situation_id>[a-z0-9-]{1,80})/$",
        views.SituationDetail.as_view(),
        name="api-situation-detail",
    ),
]
