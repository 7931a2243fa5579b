from django.urls import path

from governance.api import views

urlpatterns = [
    path("cells/", views.CellList.as_view(), name="api-cell-list"),
    path("sensitivity/", views.Sensitivity.as_view(), name="api-sensitivity"),
    path("disclosures/", views.DisclosureList.as_view(), name="api-disclosures"),
    path("decision-rights/", views.DecisionRightList.as_view(), name="api-decision-rights"),
    path("corrections/", views.CorrectionList.as_view(), name="api-corrections"),
    path("withdrawals/", views.WithdrawalList.as_view(), name="api-withdrawals"),
]
