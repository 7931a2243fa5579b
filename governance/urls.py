from django.urls import path, re_path
from django.views.generic import RedirectView

from governance import views
from mica.content.page_cache import public_page_cache as cached

app_name = "governance"

urlpatterns = [
    path("governance/", cached(views.governance), name="governance"),
    # The method's text names the governance page `/about/governance` (seed 000, "Who
    # decides ... (see `/about/governance`)"): that path leads to it, in either language.
    re_path(
        r"^about/governance/?$",
        RedirectView.as_view(pattern_name="governance:governance", permanent=True),
        name="about-governance",
    ),
    path("results/", cached(views.results), name="results"),
    path("systems/", cached(views.system_list), name="systems"),
    re_path(
        r"^systems/(?P<slug>[-a-zA-Z0-9_]{1,80})/$", cached(views.system_detail), name="system"
    ),
    path("evidence/", cached(views.evidence_list), name="evidence"),
    re_path(
        r"^evidence/(?P<cell_id>[A-Za-z0-9._-]{1,300})/$",
        cached(views.evidence_detail),
        name="evidence-cell",
    ),
    # An appeal is governance's record, filed by the challenger through the link mailed
    # with the decision (a signed key; without it the form is neither shown nor taken).
    re_path(
        r"^challenges/(?P<pk>[0-9]{1,9})/appeal/$", views.challenge_appeal, name="challenge-appeal"
    ),
]
