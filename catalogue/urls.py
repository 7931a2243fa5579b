from django.urls import path, re_path

from catalogue import views
from mica.content.page_cache import public_page_cache as cached

app_name = "catalogue"

urlpatterns = [
    path("tasks/", cached(views.task_list), name="task-list"),
    re_path(r"^tasks/(?P<slug>[a-z0-9-]{1,60})/$", cached(views.task_detail), name="task-detail"),
]
