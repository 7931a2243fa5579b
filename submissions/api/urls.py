from django.urls import path

from submissions.api import challenge_views, views

urlpatterns = [
    path("attempts/", views.AttemptIngest.as_view(), name="api-attempt-ingest"),
    path("challenges/", challenge_views.Challenges.as_view(), name="api-challenges"),
    path(
        "system-submissions/",
        challenge_views.SystemSubmissions.as_view(),
        name="api-system-submissions",
    ),
]
