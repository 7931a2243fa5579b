from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from mica import api

urlpatterns = [
    path("v1/", api.ApiRoot.as_view(), name="api-root"),
    path("v1/", include("markets.api.urls")),
    path("v1/", include("catalogue.api.urls")),
    path("v1/", include("mica.methodology.api.urls")),
    path("v1/", include("submissions.api.urls")),
    path("v1/", include("governance.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
]
