from django.urls import path

from mica.site import views

app_name = "site"

urlpatterns = [
    path("", views.home, name="home"),
    path("api/docs/", views.api_docs, name="api-docs"),
]
