from django.urls import path, re_path

from catalogue.api import views

urlpatterns = [
    path("families/", views.FamilyList.as_view(), name="api-family-list"),
    path("tasks/", views.TaskList.as_view(), name="api-task-list"),
    re_path(
        r"^tasks/(?P<slug>[a-z0-9-]{1,60})/$", views.TaskDetail.as_view(), name="api-task-detail"
    ),
    re_path(
        r"^tasks/(?P<slug>[a-z0-9-]{1,60})/instances/$",
        views.TaskInstances.as_view(),
        name="api-task-instances",
    ),
]
