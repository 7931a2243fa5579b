from django.urls import path, re_path

from markets import views

app_name = "markets"

urlpatterns = [
    path("markets/", views.market_list, name="market-list"),
    # Only two letters reach the database; anything else is a plain 404.
    re_path(r"^markets/(?P<code>[A-Za-z]{2})/$", views.market_detail, name="market-detail"),
]
