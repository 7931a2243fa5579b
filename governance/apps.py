from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = _("Governance")

    def ready(self):
        # Imported once the app registry is ready, as models must be.
        from catalogue.access import holdout_declaration_register
        from catalogue.rules import review_bar_register
        from governance.gate import cells_follow_attempts, cells_follow_outage
        from governance.publication import gate_figures, publication_refusals
        from governance.selectors import (
            corrections_by_section,
            declaration_blocks_review,
            declares_holdout_access,
        )
        from governance.services import correction_follow_acceptance
        from governance.tasks import cells_follow_inputs, gate_recompute
        from markets.workflows import outage_decided
        from mica.api import API_ENDPOINTS
        from mica.content.changes import content_committed
        from mica.jobs.registry import on_demand_job_register
        from mica.methodology import extensions
        from submissions.signals import attempts_recorded, challenge_accepted

        extensions.live_figures_register(gate_figures)
        extensions.publication_check_register(publication_refusals)
        extensions.corrections_register(corrections_by_section)
        review_bar_register(declaration_blocks_review)
        holdout_declaration_register(declares_holdout_access)
        attempts_recorded.connect(cells_follow_attempts, dispatch_uid="cells-follow-attempts")
        outage_decided.connect(cells_follow_outage, dispatch_uid="cells-follow-outage")
        challenge_accepted.connect(
            correction_follow_acceptance, dispatch_uid="correction-follows-acceptance"
        )
        content_committed.connect(cells_follow_inputs, dispatch_uid="cells-follow-inputs")
        on_demand_job_register(
            "rerun-gate", task=gate_recompute, label=_("Rerun the publication gate")
        )
        if ("sensitivity", "api-sensitivity") not in API_ENDPOINTS:
            API_ENDPOINTS.append(("sensitivity", "api-sensitivity"))
