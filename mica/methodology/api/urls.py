from django.urls import path

from mica.methodology.api import views

urlpatterns = [
    path("editions/", views.EditionList.as_view(), name="api-edition-list"),
    path("methodology/", views.Methodology.as_view(), name="api-methodology"),
    path("references/", views.ReferenceList.as_view(), name="api-reference-list"),
    path("glossary/", views.Glossary.as_view(), name="api-glossary"),
    path("facts/", views.Facts.as_view(), name="api-facts"),
]
