from django.urls import path

from submissions.api import views

urlpatterns = [
    path("attempts/", views.AttemptIngest.as_view(), name="api-attempt-ingest"),
]
