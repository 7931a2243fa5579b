from django.urls import path, re_path

from governance import views

app_name = "governance"

urlpatterns = [
    path("governance/", views.governance, name="governance"),
    path("results/", views.results, name="results"),
    path("systems/", views.system_list, name="systems"),
    re_path(r"^systems/(?P<slug>[a-z0-9-]{1,80})/$", views.system_detail, name="system"),
    path("evidence/", views.evidence_list, name="evidence"),
    re_path(
        r"^evidence/(?P<cell_id>[A-Za-z0-9._-]{1,300})/$",
        views.evidence_detail,
        name="evidence-cell",
    ),
]
