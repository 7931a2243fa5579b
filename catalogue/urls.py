from django.urls import path, re_path

from catalogue import views

app_name = "catalogue"

urlpatterns = [
    path("tasks/", views.task_list, name="task-list"),
    re_path(r"^tasks/(?P<slug>[a-z0-9-]{1,60})/$", views.task_detail, name="task-detail"),
]
