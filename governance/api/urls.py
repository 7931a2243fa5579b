from django.urls import path

from governance.api import views

urlpatterns = [
    path("cells/", views.CellList.as_view(), name="api-cell-list"),
]
