"""What governance checks before an edition is published, and the figures it gives the
edition's prose (registered with mica.methodology.extensions by GovernanceConfig)."""

from django.db import transaction
from django.utils.translation import gettext as _

from governance.gate import gate_recompute_all
from governance.models import Correction, GateCell
from governance.selectors import publishable_cells
from mica.methodology.models import ChapterItem
from submissions.models import DataStatus


def edition_is_publication_eligible(edition):
    """Fail closed: unset thresholds refuse everything, and without a cell there is nothing."""
    return edition.thresholds_set and publishable_cells().exists()


def gate_figures(edition):
    """Cells holding official run records (demo and preview cells are never counted), and
    whether anything is publication eligible."""
    return {
        "run_cell_count": GateCell.objects.filter(data_status=DataStatus.OFFICIAL).count(),
        "publication_eligible": "true" if edition_is_publication_eligible(edition) else "false",
    }


def corrections_unincorporated(edition):
    """An accepted correction of an earlier edition whose claim this one still prints as it was."""
    current = dict(
        ChapterItem.objects.filter(edition=edition).values_list("section_id", "detail_en")
    )
    refusals = []
    for correction in Correction.objects.exclude(edition=edition).select_related("edition"):
        earlier = ChapterItem.objects.filter(
            edition=correction.edition, section_id=correction.section_id
        ).first()
        if earlier and current.get(correction.section_id) == earlier.detail_en:
            refusals.append(
                _("The accepted correction of %(id)s is not incorporated yet.")
                % {"id": correction.section_id}
            )
    return refusals


class _DryRun(Exception):
    pass


def gate_dry_run_refusals(edition):
    """Recompute every cell inside a transaction that is always rolled back."""
    try:
        with transaction.atomic():
            gate_recompute_all()
            raise _DryRun
    except _DryRun:
        return []
    except Exception:  # any failure of the recompute is a refusal, reported as such
        return [_("The publication gate dry-run failed.")]


def publication_refusals(edition):
    return corrections_unincorporated(edition) + gate_dry_run_refusals(edition)
