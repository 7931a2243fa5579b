from django.urls import path, re_path

from mica.methodology.api import views

urlpatterns = [
    path("editions/", views.EditionList.as_view(), name="api-edition-list"),
    re_path(
        r"^editions/(?P<older>[a-z0-9.-]{1,40})/diff/(?P<newer>[a-z0-9.-]{1,40})/$",
        views.EditionDiff.as_view(),
        name="api-edition-diff",
    ),
    path("methodology/", views.Methodology.as_view(), name="api-methodology"),
    path("references/", views.ReferenceList.as_view(), name="api-reference-list"),
    path("glossary/", views.Glossary.as_view(), name="api-glossary"),
    path("facts/", views.Facts.as_view(), name="api-facts"),
]
