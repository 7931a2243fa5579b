from django.urls import path, re_path

from markets import views
from mica.content.page_cache import public_page_cache as cached

app_name = "markets"

urlpatterns = [
    path("markets/", cached(views.market_list), name="market-list"),
    # Only two letters reach the database; anything else is a plain 404.
    re_path(r"^markets/(?P<code>[A-Za-z]{2})/$", cached(views.market_detail), name="market-detail"),
]
